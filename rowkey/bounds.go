package rowkey

import (
	"bytes"
	"fmt"
	"sort"
)

// Range is a scan range [Start, Stop). A nil Stop means the end of the
// table; a nil Start the beginning.
type Range struct {
	Start []byte
	Stop  []byte
}

// PrefixEnd returns the smallest key greater than every key that starts with
// prefix, or nil when there is none (prefix empty or all 0xFF).
func PrefixEnd(prefix []byte) []byte {
	end, ok := appendPrefixEnd(nil, prefix)
	if !ok {
		return nil
	}
	return end
}

// appendPrefixEnd appends PrefixEnd(prefix) to dst; ok is false, and dst
// comes back as it was, when there is none.
func appendPrefixEnd(dst, prefix []byte) (out []byte, ok bool) {
	start := len(dst)
	dst = append(dst, prefix...)
	for i := len(dst) - 1; i >= start; i-- {
		if dst[i] < 0xFF {
			dst[i]++
			return dst[:i+1], true
		}
	}
	return dst[:start], false
}

// PrefixBounds turns values for a leading subset of the key's parts into the
// ranges a scan must read. Parts are bound in order while their field has a
// value. A salt part whose field has no value fans out: the result holds one
// range per bucket, in bucket order, each to be scanned and merged. With no
// bound part the result is the whole table. Values for fields the key does
// not read are ignored; a value for a part that follows an unbound one is an
// error, since the key cannot use it.
func (s *Spec) PrefixBounds(vals Values) ([]Range, error) {
	prefixes, next, err := prefixesOf(s, vals, "", nil, nil)
	if err != nil {
		return nil, err
	}
	if next == 0 {
		return []Range{{}}, nil
	}
	out := make([]Range, len(prefixes))
	for i, pre := range prefixes {
		out[i] = Range{Start: pre, Stop: PrefixEnd(pre)}
	}
	return out, nil
}

// AppendPrefixRange is PrefixBounds for the value of one field, when that
// gives one range: it appends the range's start and then its stop to dst,
// and returns both, cut from the one buffer and each capped at its length.
// With no part bound, both are nil (the whole table). A value that fans out
// over salt buckets is an error. The writer locates every live reference
// of every state this way; PrefixBounds would make a map and a slice or
// two per call.
func (s *Spec) AppendPrefixRange(dst []byte, field string, v any) (start, stop []byte, err error) {
	from := len(dst)
	var one [1][]byte // the one prefix a value without fan-out gives
	prefixes, next, err := prefixesOf(s, oneField{field, v}, "", dst, one[:0])
	switch {
	case err != nil:
		return nil, nil, err
	case next == 0:
		return nil, nil, nil
	case len(prefixes) != 1:
		return nil, nil, fmt.Errorf("rowkey: bounds of %s: %q alone fans out over %d ranges", s, field, len(prefixes))
	}
	buf := prefixes[0]
	end := len(buf)
	buf, ok := appendPrefixEnd(buf, buf[from:end])
	start = buf[from:end:end]
	if !ok {
		return start, nil, nil // PrefixEnd's nil: no key is above the prefix
	}
	return start, buf[end:len(buf):len(buf)], nil
}

// binding is where prefixesOf finds the values of fields: Values, or the
// one field AppendPrefixRange binds.
type binding interface {
	lookup(field string) (any, bool)
}

type oneField struct {
	field string
	v     any
}

func (o oneField) lookup(f string) (any, bool) {
	if f == o.field {
		return o.v, true
	}
	return nil, false
}

// prefixes encodes the bound leading parts, fanning out over unbound salts
// that precede a bound part. next is the index of the first part left
// unbound (0 when none is bound; a leading fanned-out salt alone does not
// count).
//
// ranged names a field about to be ranged over: an unbound salt before it
// fans out too. first is where the prefix is appended (the fanned-out ones
// are copies), and into holds the list of prefixes while there is one.
func prefixesOf[B binding](s *Spec, vals B, ranged string, first []byte, into [][]byte) (prefixes [][]byte, next int, err error) {
	prefixes = append(into[:0], first)
	stopped := len(s.parts)
	for i, p := range s.parts {
		v, ok := vals.lookup(p.Field)
		if ok && p.nMore > 0 {
			for _, f := range p.More() {
				if _, have := vals.lookup(f); !have {
					ok = false
				}
			}
		}
		if !ok {
			if p.Func == Salt && (laterBound(s, i, vals) || s.laterReads(i, ranged)) {
				fanned := make([][]byte, 0, len(prefixes)*p.N)
				for _, pre := range prefixes {
					for b := 0; b < p.N; b++ {
						fanned = append(fanned, append(append([]byte(nil), pre...), byte(b)))
					}
				}
				prefixes = fanned
				continue
			}
			stopped = i
			break
		}
		for j := range prefixes {
			if p.nMore > 0 {
				prefixes[j], err = appendMultiHash(prefixes[j], &s.parts[i], func(k int) (any, bool) { return vals.lookup(p.field(k)) })
			} else {
				prefixes[j], err = appendPart(prefixes[j], &s.parts[i], v)
			}
			if err != nil {
				return nil, 0, fmt.Errorf("rowkey: bounds of %s: part %q: %w", s, p.Expr, err)
			}
		}
		next = i + 1
	}
	if stopped < len(s.parts) && s.parts[stopped].Field == ranged {
		next = stopped // the ranged part follows the prefix, fanned salts included
	}
	for _, p := range s.parts[min(stopped+1, len(s.parts)):] {
		if _, ok := vals.lookup(p.Field); ok && !s.boundBefore(p.Field, stopped) {
			return nil, 0, fmt.Errorf("rowkey: bounds of %s: %q has a value but %q before it has none", s, p.Expr, s.parts[stopped].Expr)
		}
	}
	if next == 0 {
		return [][]byte{nil}, 0, nil
	}
	return prefixes, next, nil
}

// RangeBounds is PrefixBounds narrowed by a range of values [lo, hi) of the
// field read by the first unbound part (nil lo or hi: open on that side).
// Reversed parts are handled (the byte range is flipped); a day part widens
// to whole days, so the caller filters the edges; salt and hash parts have
// no order and are refused. The field must not also be in vals.
func (s *Spec) RangeBounds(vals Values, field string, lo, hi any) ([]Range, error) {
	if _, ok := vals[field]; ok {
		return nil, fmt.Errorf("rowkey: range of %s: %q is both fixed and ranged", s, field)
	}
	prefixes, next, err := prefixesOf(s, vals, field, nil, nil)
	if err != nil {
		return nil, err
	}
	if next >= len(s.parts) || s.parts[next].Field != field {
		return nil, fmt.Errorf("rowkey: range of %s: %q is not the part after the fixed prefix", s, field)
	}
	p := s.parts[next]
	if p.Func == Salt || p.Func == Hash || p.Func == BitReverse {
		return nil, fmt.Errorf("rowkey: range of %s: %q has no order to range over", s, p.Expr)
	}
	if p.Func == Text && p.Type != Timestamp {
		// Decimal text orders as numbers only at one width, and text with
		// a delimiter orders as strings only if the delimiter sorts first.
		return nil, fmt.Errorf("rowkey: range of %s: %q: text orders as its values only for timestamps (13 digits from 2001 to 2286); use pad(field, n) for numbers", s, p.Expr)
	}
	// Work out the first and last encodings of the part inside the range,
	// each with whether the bound is inclusive of that encoding.
	var from, to []byte // nil: unbounded
	var toIncl bool
	enc := func(v any) ([]byte, error) { return appendPart(nil, &p, v) }
	switch p.Func {
	case Plain, Pad, Text:
		if lo != nil {
			if from, err = enc(lo); err != nil {
				return nil, err
			}
		}
		if hi != nil {
			if to, err = enc(hi); err != nil {
				return nil, err
			}
		}
	case Reverse:
		// Larger values encode smaller: [lo, hi) becomes (rev(hi), rev(lo)].
		if hi != nil {
			if from, err = enc(hi); err != nil {
				return nil, err
			}
			from = PrefixEnd(from)
			if from == nil {
				return nil, nil // hi is the smallest value: nothing is below it
			}
		}
		if lo != nil {
			if to, err = enc(lo); err != nil {
				return nil, err
			}
			toIncl = true
		}
	case Day:
		if lo != nil {
			if from, err = enc(lo); err != nil {
				return nil, err
			}
		}
		if hi != nil {
			nv, err := Normalize(p.Type, hi)
			if err != nil {
				return nil, err
			}
			if to, err = enc(nv.(int64) - 1); err != nil {
				return nil, err
			}
			toIncl = true
		}
	}
	out := make([]Range, 0, len(prefixes))
	for _, pre := range prefixes {
		r := Range{Start: pre, Stop: PrefixEnd(pre)}
		if from != nil {
			r.Start = append(append([]byte(nil), pre...), from...)
		}
		if to != nil {
			stop := append(append([]byte(nil), pre...), to...)
			if toIncl {
				stop = PrefixEnd(stop)
			}
			r.Stop = stop
		}
		if r.Stop != nil && bytes.Compare(r.Start, r.Stop) >= 0 {
			continue // empty
		}
		out = append(out, r)
	}
	return out, nil
}

// laterBound reports whether some part after i has a value, which is what
// makes fanning out over a salt worth it.
func laterBound[B binding](s *Spec, i int, vals B) bool {
	for _, p := range s.parts[i+1:] {
		if _, ok := vals.lookup(p.Field); ok {
			return true
		}
	}
	return false
}

// laterReads reports whether a part after i reads field.
func (s *Spec) laterReads(i int, field string) bool {
	for _, p := range s.parts[i+1:] {
		if field != "" && p.Field == field {
			return true
		}
	}
	return false
}

// boundBefore reports whether field is read by a part before index i (then a
// later part reading the same field is not a gap).
func (s *Spec) boundBefore(field string, i int) bool {
	for _, p := range s.parts[:i] {
		if p.Field == field {
			return true
		}
	}
	return false
}

// Bound is how a query's fields meet a key: how many leading parts they fix,
// and how many salt buckets must be scanned to do so.
type Bound struct {
	Parts  int  // leading parts fixed (salt parts fanned out count as fixed)
	FanOut int  // ranges to scan: the product of fanned-out salt buckets; 1 if none
	Full   bool // every part is fixed: a single-row Get (when FanOut is 1)
	// Unused lists the given fields that no fixed part reads: they can only
	// be applied as a filter after reading.
	Unused []string
}

// BindFields tells, without values, which parts a set of fields fixes, in
// the same way PrefixBounds does.
func (s *Spec) BindFields(fields []string) Bound {
	have := map[string]bool{}
	for _, f := range fields {
		have[f] = true
	}
	b := Bound{FanOut: 1}
	used := map[string]bool{}
	fanout := 1
	for i, p := range s.parts {
		all := have[p.Field]
		for _, f := range p.More() {
			all = all && have[f]
		}
		if all {
			b.Parts = i + 1
			b.FanOut = fanout
			for _, f := range p.Fields() {
				used[f] = true
			}
			continue
		}
		if p.Func == Salt {
			later := false
			for _, q := range s.parts[i+1:] {
				if have[q.Field] {
					later = true
				}
			}
			if later {
				fanout *= p.N
				continue
			}
		}
		break
	}
	b.Full = b.Parts == len(s.parts)
	for _, f := range fields {
		if !used[f] {
			b.Unused = append(b.Unused, f)
		}
	}
	return b
}

// SplitKeys proposes region boundaries for a table created with the given
// number of regions, from the key's leading salt or hash part. Keys that
// start otherwise have no known distribution: use SplitKeysFromSamples.
func (s *Spec) SplitKeys(regions int) ([][]byte, error) {
	if regions <= 1 {
		return nil, nil
	}
	first := s.parts[0]
	switch first.Func {
	case Salt:
		if regions > first.N {
			regions = first.N // a bucket is the finest unit the salt spreads
		}
		var out [][]byte
		last := -1
		for i := 1; i < regions; i++ {
			b := i * first.N / regions
			if b != last {
				out = append(out, []byte{byte(b)})
				last = b
			}
		}
		return out, nil
	case Hash, BitReverse:
		// Both spread values evenly over their leading bytes.
		width := first.Width()
		if width > 4 {
			width = 4
		}
		space := uint64(1) << (8 * uint(width))
		if uint64(regions) > space {
			regions = int(space)
		}
		var out [][]byte
		for i := 1; i < regions; i++ {
			v := uint64(i) * space / uint64(regions)
			k := make([]byte, width)
			for j := width - 1; j >= 0; j-- {
				k[j] = byte(v)
				v >>= 8
			}
			out = append(out, k)
		}
		return out, nil
	}
	return nil, fmt.Errorf("rowkey: %s starts with %q, not a salt, hash or bitrev: split points need sample keys", s, first.Expr)
}

// SplitKeysFromSamples picks region boundaries at even quantiles of sample
// keys, dropping duplicates.
func SplitKeysFromSamples(samples [][]byte, regions int) [][]byte {
	if regions <= 1 || len(samples) == 0 {
		return nil
	}
	sorted := make([]string, len(samples))
	for i, k := range samples {
		sorted[i] = string(k)
	}
	sort.Strings(sorted)
	var out [][]byte
	last := ""
	for i := 1; i < regions; i++ {
		k := sorted[i*len(sorted)/regions]
		if k != last && k != "" {
			out = append(out, []byte(k))
			last = k
		}
	}
	return out
}
