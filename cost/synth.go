package cost

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// synth makes deterministic synthetic records that follow the schema's
// declared sizes and, where the workload declares them, its distributions.
// Free text is random letters and digits, which compresses worse than most
// real data: on-disk figures from it are on the safe side.
type synth struct {
	plan *schema.Plan
	ent  *schema.Entity
	rng  *rand.Rand
	base int64 // the first timestamp, ms
	// maxChildren caps the elements generated per child list, so a schema
	// with a huge bound can still be measured.
	maxChildren int
}

const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

func newSynth(p *schema.Plan, e *schema.Entity, seed uint64, base int64) *synth {
	return &synth{plan: p, ent: e, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), base: base, maxChildren: 1000}
}

// element is one child list element: field name -> value.
type element map[string]any

// record is one entity: its fields by path and its child lists.
type record struct {
	values   rowkey.Values
	children map[string][]element
}

func (s *synth) record(i int) record {
	r := record{values: rowkey.Values{}, children: map[string][]element{}}
	for _, f := range s.ent.Fields {
		r.values[f.Path] = s.value(f, i, -1)
	}
	for _, c := range s.ent.Children {
		n, _ := childCount(c)
		count := min(int(n), s.maxChildren)
		elems := make([]element, count)
		for j := range elems {
			el := element{}
			for _, f := range c.Fields {
				el[f.Name] = s.value(f, i, j)
			}
			elems[j] = el
		}
		r.children[c.Name] = elems
	}
	return r
}

// value makes field f's value for record i (and child element j, or -1).
func (s *synth) value(f *schema.Field, i, j int) any {
	if j >= 0 {
		if c := s.ent.Child(f.Child); c != nil && c.Key == f.Name {
			return s.fromIndex(f, int64(j)) // unique within the list
		}
	} else if s.isKey(f.Path) {
		return s.fromIndex(f, int64(i)) // unique per record
	}
	if d := s.plan.Workload.Distribution(s.ent.Name, f.Path); d != nil {
		switch d.Kind {
		case schema.DistSequential:
			return s.fromIndex(f, int64(i))
		case schema.DistWeighted:
			if v, ok := s.weighted(f, d); ok {
				return v
			}
		default:
			if d.Cardinality > 0 {
				return s.fromIndex(f, s.rng.Int64N(d.Cardinality))
			}
		}
	}
	switch f.Type {
	case rowkey.String:
		return s.text(int(f.AvgSize()))
	case rowkey.Bytes:
		b := make([]byte, f.AvgSize())
		for k := range b {
			b[k] = byte(s.rng.Uint32())
		}
		return b
	case rowkey.Int32:
		return int32(s.rng.Int32N(1 << 20))
	case rowkey.Int64:
		return s.rng.Int64N(1 << 40)
	case rowkey.Timestamp:
		return s.base - s.rng.Int64N(30*24*3600*1000)
	case rowkey.Bool:
		return s.rng.IntN(2) == 1
	case rowkey.Float64:
		return s.rng.Float64() * 1000
	}
	return nil
}

func (s *synth) isKey(path string) bool {
	for _, k := range s.ent.Key {
		if k == path {
			return true
		}
	}
	return false
}

// fromIndex maps an index to a value of the field's type: distinct indexes
// give distinct values, and strings keep the declared size.
func (s *synth) fromIndex(f *schema.Field, n int64) any {
	switch f.Type {
	case rowkey.String:
		return padded(n, int(f.AvgSize()))
	case rowkey.Bytes:
		return []byte(padded(n, int(f.AvgSize())))
	case rowkey.Int32:
		return int32(n)
	case rowkey.Int64:
		return n
	case rowkey.Timestamp:
		return s.base + n*1000
	case rowkey.Bool:
		return n%2 == 1
	case rowkey.Float64:
		return float64(n)
	}
	return nil
}

func (s *synth) weighted(f *schema.Field, d *schema.Distribution) (any, bool) {
	if f.Type != rowkey.String || len(d.Values) == 0 {
		return nil, false
	}
	vals := make([]string, 0, len(d.Values))
	var total float64
	for v, w := range d.Values {
		vals = append(vals, v)
		total += w
	}
	sort.Strings(vals) // map order is random; the stream must not be
	x := s.rng.Float64() * total
	for _, v := range vals {
		x -= d.Values[v]
		if x < 0 {
			return v, true
		}
	}
	return vals[len(vals)-1], true
}

func (s *synth) text(n int) string {
	var b strings.Builder
	b.Grow(n)
	for range n {
		b.WriteByte(alnum[s.rng.IntN(len(alnum))])
	}
	return b.String()
}

// padded renders n in decimal, left-padded with zeros to size (longer when
// n needs more digits).
func padded(n int64, size int) string {
	return fmt.Sprintf("%0*d", max(size, 1), n)
}

// encodeValue is the cell encoding the measurement assumes: fixed-width
// big-endian numbers, raw strings and bytes.
func encodeValue(v any) []byte {
	switch x := v.(type) {
	case string:
		return []byte(x)
	case []byte:
		return x
	case int32:
		return binary.BigEndian.AppendUint32(nil, uint32(x))
	case int64:
		return binary.BigEndian.AppendUint64(nil, uint64(x))
	case float64:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
	case bool:
		if x {
			return []byte{1}
		}
		return []byte{0}
	}
	return nil
}

// encodeElement lays out a whole child element: its fields in schema order,
// back to back.
func encodeElement(c *schema.Child, el element) []byte {
	var out []byte
	for _, f := range c.Fields {
		out = append(out, encodeValue(el[f.Name])...)
	}
	return out
}
