package hotspot

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// defaultCardinality is the number of distinct values assumed for an id
// field when neither its distribution nor the entity count says.
const defaultCardinality = 1_000_000

// lowCardinality is how many values a field with no declared distribution
// and a name that does not look like an identifier gets: statuses, types
// and countries have few values, and few values are what make hot
// prefixes.
const lowCardinality = 8

// clock is the simulated moment a sample is drawn at: when it happens, and
// how many writes of the entity came before it (for sequence numbers).
type clock struct {
	nowMs  int64
	serial int64
}

// fieldGen draws values of one field.
type fieldGen func(r *rand.Rand, c clock) any

// entityGen draws synthetic values for the fields of one entity.
type entityGen struct {
	plan *schema.Plan
	ent  *schema.Entity
	gens map[string]fieldGen
}

func newEntityGen(p *schema.Plan, e *schema.Entity) *entityGen {
	return &entityGen{plan: p, ent: e, gens: map[string]fieldGen{}}
}

// values draws one value for each of fields, sharing one draw per field,
// into vals (cleared first: the simulation reuses one map per sample).
func (g *entityGen) values(r *rand.Rand, c clock, fields []string, vals rowkey.Values) (rowkey.Values, error) {
	if vals == nil {
		vals = make(rowkey.Values, len(fields))
	}
	clear(vals)
	for _, f := range fields {
		if _, ok := vals[f]; ok {
			continue
		}
		gen, err := g.gen(f)
		if err != nil {
			return nil, err
		}
		vals[f] = gen(r, c)
	}
	return vals, nil
}

func (g *entityGen) gen(path string) (fieldGen, error) {
	if gen, ok := g.gens[path]; ok {
		return gen, nil
	}
	f := g.ent.Field(path)
	if f == nil {
		f = g.fanoutField(path)
	}
	if f == nil {
		return nil, fmt.Errorf("hotspot: entity %s has no field %q", g.ent.Name, path)
	}
	gen, err := g.build(f)
	if err != nil {
		return nil, fmt.Errorf("hotspot: values of %s.%s: %w", g.ent.Name, path, err)
	}
	g.gens[path] = gen
	return gen, nil
}

// build picks how a field's values are drawn: from its declared
// distribution when there is one, else from what the field is (a
// timestamp follows the clock, an id is spread over the entity count, a
// child's key is a small position, anything else has few values).
func (g *entityGen) build(f *schema.Field) (fieldGen, error) {
	if d := g.plan.Workload.Distribution(g.ent.Name, f.Path); d != nil {
		return g.declared(f, d)
	}
	if f.Type == rowkey.Timestamp {
		return func(_ *rand.Rand, c clock) any { return c.nowMs }, nil
	}
	if f.Type == rowkey.Bool {
		return func(r *rand.Rand, _ clock) any { return r.IntN(2) == 1 }, nil
	}
	if f.Child != "" {
		if ch := g.ent.Child(f.Child); ch != nil && ch.Key == f.Name {
			n := ch.Typical
			if n <= 0 {
				n = ch.Max
			}
			n = max(n, 1)
			return func(r *rand.Rand, _ clock) any { return typed(f, int64(r.IntN(n))) }, nil
		}
	}
	if g.isKey(f.Path) || looksLikeID(f.Name) {
		card := g.entityCount()
		return func(r *rand.Rand, _ clock) any { return typed(f, r.Int64N(card)) }, nil
	}
	if f.Type == rowkey.Float64 {
		return func(r *rand.Rand, _ clock) any { return r.Float64() * 1000 }, nil
	}
	return skewedSmall(f), nil
}

func (g *entityGen) declared(f *schema.Field, d *schema.Distribution) (fieldGen, error) {
	card := d.Cardinality
	if card <= 0 {
		card = g.entityCount()
	}
	switch d.Kind {
	case schema.DistSequential:
		if f.Type == rowkey.Timestamp {
			return func(_ *rand.Rand, c clock) any { return c.nowMs }, nil
		}
		return func(_ *rand.Rand, c clock) any { return typed(f, c.serial) }, nil
	case schema.DistZipf:
		z := newZipf(card, d.Skew)
		return func(r *rand.Rand, _ clock) any { return typed(f, z.draw(r)) }, nil
	case schema.DistWeighted:
		return weighted(f, d.Values)
	}
	// uniform, and anything newer than this package
	return func(r *rand.Rand, _ clock) any { return typed(f, r.Int64N(card)) }, nil
}

func (g *entityGen) isKey(path string) bool {
	for _, k := range g.ent.Key {
		if k == path {
			return true
		}
	}
	return false
}

func (g *entityGen) entityCount() int64 {
	w := g.plan.Workload
	if n := w.EntityCounts[g.ent.Name]; n > 0 {
		return n
	}
	if w.Entities > 0 && len(w.EntityCounts) == 0 {
		return w.Entities
	}
	return defaultCardinality
}

// looksLikeID reports whether a field name reads as an identifier
// (orderId, customer_id, sku, uuid): such fields have many values.
func looksLikeID(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"id", "key", "sku", "uuid", "guid", "name", "email", "hash"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// skewedSmall draws one of lowCardinality values with shares halving from
// one value to the next, the shape of a status field.
func skewedSmall(f *schema.Field) fieldGen {
	return func(r *rand.Rand, _ clock) any {
		i := 0
		for i < lowCardinality-1 && r.IntN(2) == 0 {
			i++
		}
		if f.Type == rowkey.String {
			return "S" + strconv.Itoa(i)
		}
		return typed(f, int64(i))
	}
}

// weighted draws among explicit values by share.
func weighted(f *schema.Field, shares map[string]float64) (fieldGen, error) {
	keys := make([]string, 0, len(shares))
	var total float64
	for k, w := range shares {
		keys = append(keys, k)
		total += w
	}
	if total <= 0 {
		return nil, fmt.Errorf("weighted distribution with no positive share")
	}
	sort.Strings(keys) // map order is random; the draws must not be
	vals := make([]any, len(keys))
	cum := make([]float64, len(keys))
	var run float64
	for i, k := range keys {
		v, err := parseAs(f.Type, k)
		if err != nil {
			return nil, fmt.Errorf("value %q: %w", k, err)
		}
		vals[i] = v
		run += shares[k] / total
		cum[i] = run
	}
	return func(r *rand.Rand, _ clock) any {
		x := r.Float64()
		i := sort.SearchFloat64s(cum, x)
		return vals[min(i, len(vals)-1)]
	}, nil
}

// parseAs reads a weighted distribution's value (written as a YAML key) as
// the field's type.
func parseAs(t rowkey.Type, s string) (any, error) {
	switch t {
	case rowkey.String:
		return s, nil
	case rowkey.Bytes:
		return []byte(s), nil
	case rowkey.Int32:
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case rowkey.Int64, rowkey.Timestamp:
		return strconv.ParseInt(s, 10, 64)
	case rowkey.Bool:
		return strconv.ParseBool(s)
	case rowkey.Float64:
		return strconv.ParseFloat(s, 64)
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

// typed turns an index into a value of the field's type; distinct indexes
// give distinct values, and strings have the declared size, so key lengths
// are realistic.
func typed(f *schema.Field, n int64) any {
	switch f.Type {
	case rowkey.String:
		return padded(f, n)
	case rowkey.Bytes:
		return []byte(padded(f, n))
	case rowkey.Int32:
		return int32(n)
	case rowkey.Int64:
		return n
	case rowkey.Timestamp:
		return n * 1000
	case rowkey.Bool:
		return n%2 == 1
	case rowkey.Float64:
		return float64(n)
	}
	return n
}

func padded(f *schema.Field, n int64) string {
	digits := strconv.FormatInt(n, 10)
	if pad := int(f.AvgSize()) - len(digits); pad > 0 {
		return strings.Repeat("0", pad) + digits
	}
	return digits
}

// zipf draws ranks 0..n-1 with P(rank k) roughly proportional to
// 1/(k+1)^s, by inverting the continuous approximation of the CDF, which
// works for any s >= 0 (math/rand's Zipf needs s > 1). Ranks are then
// scattered over the id space, since popular ids are not neighbours in
// key order.
type zipf struct {
	n    int64
	s    float64
	top  float64 // the CDF's normaliser for s != 1
	mult uint64  // scatter multiplier, coprime to n
}

func newZipf(n int64, s float64) zipf {
	z := zipf{n: max(n, 1), s: s}
	if s != 1 {
		z.top = math.Pow(float64(z.n)+1, 1-s) - 1
	}
	// An affine map k -> k*m mod n is a bijection of [0, n) when m and n
	// are coprime; start from Knuth's multiplicative constant.
	m := uint64(2654435761) % uint64(z.n)
	for m == 0 || gcd(m, uint64(z.n)) != 1 {
		m++
	}
	z.mult = m
	return z
}

func (z zipf) draw(r *rand.Rand) int64 {
	u := r.Float64()
	var x float64
	if z.s == 1 {
		x = math.Pow(float64(z.n)+1, u)
	} else {
		x = math.Pow(1+u*z.top, 1/(1-z.s))
	}
	rank := min(max(int64(x)-1, 0), z.n-1)
	hi, lo := bits.Mul64(uint64(rank), z.mult)
	return int64(bits.Rem64(hi, lo, uint64(z.n)))
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fanoutField finds a field of the list a fanout table of the entity
// copies into ("followers.followerId"): its keys read those fields.
func (g *entityGen) fanoutField(path string) *schema.Field {
	for _, t := range g.plan.Tables {
		if t.Fanout == nil || t.Entity != g.ent.Name {
			continue
		}
		if te := g.plan.Entity(t.Fanout.Entity); te != nil {
			if f := te.Field(path); f != nil && f.Child == t.Fanout.List {
				return f
			}
		}
	}
	return nil
}
