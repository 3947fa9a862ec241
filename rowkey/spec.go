package rowkey

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Values maps field paths ("orderId", "items.sku") to values. A field used by
// several parts (salt(orderId, 8) and orderId) appears once.
type Values map[string]any

// Spec is a composite key: an ordered list of typed parts. A Spec is
// immutable and safe for concurrent use.
type Spec struct {
	parts []Part
	// source maps a field to the index of the first part whose value
	// stands for it when decoding: the first recoverable part reading it.
	// Set once by NewSpec and read-only after.
	source map[string]int
}

const msPerDay = 24 * 60 * 60 * 1000

// NewSpec checks that every part has a type its function accepts.
func NewSpec(parts []Part) (*Spec, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("rowkey: a key needs at least one part")
	}
	for i, p := range parts {
		if err := p.checkType(); err != nil {
			return nil, err
		}
		if p.Func == Text && p.Delim == "" && i < len(parts)-1 {
			return nil, fmt.Errorf("key part %q: text without a delimiter reads to the end of the key, so it must be the last part (or give one: text(%s, #))", p.Expr, p.Field)
		}
	}
	s := &Spec{parts: append([]Part(nil), parts...), source: map[string]int{}}
	for j, p := range s.parts {
		if _, ok := s.source[p.Field]; !ok && p.Recoverable() {
			s.source[p.Field] = j
		}
	}
	return s, nil
}

// Parse reads key expressions and types their fields with typeOf.
func Parse(exprs []string, typeOf func(field string) (Type, bool)) (*Spec, error) {
	parts := make([]Part, 0, len(exprs))
	for _, e := range exprs {
		p, err := ParsePart(e)
		if err != nil {
			return nil, err
		}
		t, ok := typeOf(p.Field)
		if !ok {
			return nil, fmt.Errorf("key part %q: unknown field %q", e, p.Field)
		}
		p.Type = t
		if err := p.TypeMore(typeOf); err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return NewSpec(parts)
}

// Parts returns a copy of the parts.
func (s *Spec) Parts() []Part { return append([]Part(nil), s.parts...) }

// Len is the number of parts.
func (s *Spec) Len() int { return len(s.parts) }

// Part returns part i.
func (s *Spec) Part(i int) Part { return s.parts[i] }

// Fields returns the distinct fields the key reads, in first-use order.
func (s *Spec) Fields() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range s.parts {
		for _, f := range p.Fields() {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// Recoverable reports whether a field's value can be read back from a key:
// some part encodes it plainly or reversed.
func (s *Spec) Recoverable(field string) bool {
	for _, p := range s.parts {
		if p.Field == field && p.Recoverable() {
			return true
		}
	}
	return false
}

// Exprs returns the parts as canonical expressions.
func (s *Spec) Exprs() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.String()
	}
	return out
}

func (s *Spec) String() string { return "[" + strings.Join(s.Exprs(), ", ") + "]" }

// MarshalJSON writes the key as its list of expressions.
func (s *Spec) MarshalJSON() ([]byte, error) { return json.Marshal(s.Exprs()) }

// Encode builds the full key from values for every field the key reads.
// Fields the key does not use are ignored.
func (s *Spec) Encode(vals Values) ([]byte, error) {
	return s.AppendEncode(make([]byte, 0, 48), vals)
}

// AppendEncode is Encode appending the key to dst, for callers that cut
// many keys from one buffer.
func (s *Spec) AppendEncode(dst []byte, vals Values) ([]byte, error) {
	return s.AppendEncodeWith(dst, func(i, k int) (any, bool) {
		v, ok := vals[s.parts[i].field(k)]
		return v, ok
	})
}

// AppendEncodeWith is AppendEncode for values kept other than by name:
// value(i, k) is the value of part i's field k (0 its Field, then a hash's
// further fields in order, as Part.Fields lists them) and whether there is
// one. A caller that has resolved each part's fields to places once (a
// slot in a state laid out by field) encodes keys without looking a name
// up per part.
func (s *Spec) AppendEncodeWith(dst []byte, value func(i, k int) (any, bool)) ([]byte, error) {
	key := dst
	for i := range s.parts {
		p := &s.parts[i] // a Part is large: not copied per key
		var err error
		if p.nMore > 0 {
			if key, err = appendMultiHash(key, p, func(k int) (any, bool) { return value(i, k) }); err != nil {
				return nil, fmt.Errorf("rowkey: encoding part %q of %s: %w", p.Expr, s, err)
			}
			continue
		}
		v, ok := value(i, 0)
		if !ok {
			return nil, fmt.Errorf("rowkey: encoding %s: no value for %q", s, p.Field)
		}
		if key, err = appendPart(key, p, v); err != nil {
			return nil, fmt.Errorf("rowkey: encoding part %q of %s: %w", p.Expr, s, err)
		}
	}
	return key, nil
}

func (v Values) lookup(f string) (any, bool) {
	x, ok := v[f]
	return x, ok
}

// appendPart encodes one part of a key from its field's value (a hash of
// several fields needs appendMultiHash).
func appendPart(dst []byte, p *Part, v any) ([]byte, error) {
	switch p.Func {
	case Text, Pad, BitReverse:
		return appendFormatted(dst, p, v)
	case Plain:
		return AppendValue(dst, p.Type, v)
	case Reverse:
		n, err := int64Value(p.Type, v)
		if err != nil {
			return dst, err
		}
		if n < 0 {
			return dst, fmt.Errorf("reverse of negative value %d", n)
		}
		// Plain big-endian of MaxInt64 - n: the same bytes a Java client
		// writes with Bytes.toBytes(Long.MAX_VALUE - ts).
		return binary.BigEndian.AppendUint64(dst, uint64(math.MaxInt64-n)), nil
	case Salt:
		var buf [64]byte // on the stack for the usual short field
		enc, err := AppendValue(buf[:0], p.Type, v)
		if err != nil {
			return dst, err
		}
		return append(dst, SaltBucket(enc, p.N)), nil
	case Hash:
		if p.nMore > 0 {
			return dst, fmt.Errorf("hash of %d fields needs all their values", p.nMore+1)
		}
		var buf [64]byte
		enc, err := AppendValue(buf[:0], p.Type, v)
		if err != nil {
			return dst, err
		}
		return append(dst, HashPrefix(enc, p.N)...), nil
	case Day:
		n, err := int64Value(p.Type, v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint32(dst, uint32(DayNumber(n))^signFlip32), nil
	}
	return dst, fmt.Errorf("unknown key function %v", p.Func)
}

// int64Value is a numeric or timestamp field's value as an int64, without
// the allocation Normalize's boxing costs for the usual int64 and int32.
func int64Value(t Type, v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		if t == Int64 || t == Timestamp {
			return x, nil
		}
	case int32:
		if t == Int32 {
			return int64(x), nil
		}
	}
	nv, err := Normalize(t, v)
	if err != nil {
		return 0, err
	}
	return asInt64(nv), nil
}

func asInt64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// DayNumber is the UTC day of an epoch-milliseconds timestamp, counted from
// 1970-01-01 (negative before it).
func DayNumber(ms int64) int32 {
	d := ms / msPerDay
	if ms%msPerDay < 0 {
		d--
	}
	return int32(d)
}

// Decoded is one part read back from a key.
type Decoded struct {
	Part Part
	// Value: Plain and Reverse give the field's value (canonical type, see
	// Normalize); Salt gives the bucket as an int; Hash the prefix bytes;
	// Day the epoch milliseconds of that day's UTC midnight.
	Value any
	Raw   []byte // the part's bytes in the key
}

// Decode splits a key into its parts. It fails, without panicking, on keys
// that are truncated, too long, malformed, or whose salt, hash or day part
// disagrees with the field it was computed from.
func (s *Spec) Decode(key []byte) ([]Decoded, error) {
	return s.decodeInto(make([]Decoded, 0, len(s.parts)), key)
}

// decodeInto is Decode appending to out, which DecodeValuesInto keeps on
// its stack: the parts are only read there, never returned.
func (s *Spec) decodeInto(out []Decoded, key []byte) ([]Decoded, error) {
	rest := key
	for _, p := range s.parts {
		start := rest
		var v any
		var err error
		v, rest, err = decodePart(p, rest)
		if err != nil {
			return nil, fmt.Errorf("rowkey: decoding part %q of %s at byte %d: %w", p.Expr, s, len(key)-len(start), err)
		}
		out = append(out, Decoded{Part: p, Value: v, Raw: start[:len(start)-len(rest)]})
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("rowkey: decoding %s: %w: %d bytes after the last part", s, ErrCorrupt, len(rest))
	}
	if err := s.checkDerived(out); err != nil {
		return nil, err
	}
	return out, nil
}

func decodePart(p Part, b []byte) (any, []byte, error) {
	switch p.Func {
	case Text, Pad, BitReverse:
		return decodeFormatted(p, b)
	case Plain:
		return DecodeValue(p.Type, b)
	case Reverse:
		if len(b) < 8 {
			return nil, nil, fmt.Errorf("%w: reverse needs 8 bytes, %d left", ErrCorrupt, len(b))
		}
		u := binary.BigEndian.Uint64(b)
		if u > math.MaxInt64 {
			return nil, nil, fmt.Errorf("%w: reversed value has its top bit set", ErrCorrupt)
		}
		n := math.MaxInt64 - int64(u)
		if p.Type == Int32 {
			if n > math.MaxInt32 {
				return nil, nil, fmt.Errorf("%w: reversed value %d out of int32 range", ErrCorrupt, n)
			}
			return int32(n), b[8:], nil
		}
		return n, b[8:], nil
	case Salt:
		if len(b) < 1 {
			return nil, nil, fmt.Errorf("%w: missing salt byte", ErrCorrupt)
		}
		if int(b[0]) >= p.N {
			return nil, nil, fmt.Errorf("%w: salt bucket %d not below %d", ErrCorrupt, b[0], p.N)
		}
		return int(b[0]), b[1:], nil
	case Hash:
		if len(b) < p.N {
			return nil, nil, fmt.Errorf("%w: hash needs %d bytes, %d left", ErrCorrupt, p.N, len(b))
		}
		return append([]byte(nil), b[:p.N]...), b[p.N:], nil
	case Day:
		if len(b) < 4 {
			return nil, nil, fmt.Errorf("%w: day needs 4 bytes, %d left", ErrCorrupt, len(b))
		}
		d := int32(binary.BigEndian.Uint32(b) ^ signFlip32)
		return int64(d) * msPerDay, b[4:], nil
	}
	return nil, nil, fmt.Errorf("%w: unknown key function %v", ErrCorrupt, p.Func)
}

// checkDerived recomputes every part from the value of its field, where
// the key carries that value, so a garbled key is caught: a salt, hash or day
// that does not match its field, or one field encoded twice (plainly and
// reversed) with two different values.
func (s *Spec) checkDerived(parts []Decoded) error {
	source := s.source
	for i, d := range parts {
		var want []byte
		var err error
		if d.Part.nMore > 0 {
			// A hash of several fields is checked when the key carries
			// every one of them.
			complete := true
			for _, f := range d.Part.Fields() {
				if _, ok := source[f]; !ok {
					complete = false
				}
			}
			if !complete {
				continue
			}
			want, err = appendMultiHash(nil, &d.Part, func(k int) (any, bool) { return parts[source[d.Part.field(k)]].Value, true })
		} else {
			// A part that is its own source needs no check: decoding
			// accepts only canonical encodings, so it would re-encode to
			// itself.
			j, ok := source[d.Part.Field]
			if !ok || j == i {
				continue
			}
			want, err = appendPart(nil, &d.Part, parts[j].Value)
		}
		if err != nil {
			return fmt.Errorf("rowkey: decoding %s: %w: recomputing %q: %v", s, ErrCorrupt, d.Part.Expr, err)
		}
		if !bytes.Equal(want, d.Raw) {
			return fmt.Errorf("rowkey: decoding %s: %w: part %q does not match field %q", s, ErrCorrupt, d.Part.Expr, d.Part.Field)
		}
	}
	return nil
}

// DecodeValues returns the field values a key carries (plain and reversed
// parts); derived parts are checked but not returned.
func (s *Spec) DecodeValues(key []byte) (Values, error) {
	vals := make(Values, len(s.parts))
	if err := s.DecodeValuesInto(key, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// DecodeValuesInto is DecodeValues adding the values to dst, a map the
// caller made with room for what it adds after them (an entity's state
// starts from its primary key's fields). A field already in dst is left as
// it is. On an error dst may hold some of the key's values.
func (s *Spec) DecodeValuesInto(key []byte, dst Values) error {
	// Keys have a few parts: up to eight are decoded without allocating.
	var buf [8]Decoded
	parts, err := s.decodeInto(buf[:0], key)
	if err != nil {
		return err
	}
	for _, d := range parts {
		if _, seen := dst[d.Part.Field]; !seen && d.Part.Recoverable() {
			dst[d.Part.Field] = d.Value
		}
	}
	return nil
}
