package rowkey

import (
	"bytes"
	"cmp"
	"errors"
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// typesOf is a field -> type table for tests.
func typesOf(m map[string]Type) func(string) (Type, bool) {
	return func(f string) (Type, bool) { t, ok := m[f]; return t, ok }
}

var orderTypes = typesOf(map[string]Type{
	"customerId": String, "placedAt": Timestamp, "orderId": String, "status": String,
	"items.sku": String, "deviceId": String, "ts": Timestamp, "n32": Int32, "n64": Int64,
	"b": Bool, "raw": Bytes, "f": Float64,
})

func mustSpec(t testing.TB, exprs ...string) *Spec {
	t.Helper()
	s, err := Parse(exprs, orderTypes)
	if err != nil {
		t.Fatalf("Parse(%q): %v", exprs, err)
	}
	return s
}

func TestParsePart(t *testing.T) {
	good := map[string]Part{
		"customerId":        {Func: Plain, Field: "customerId"},
		" reverse(ts) ":     {Func: Reverse, Field: "ts"},
		"salt(orderId, 8)":  {Func: Salt, Field: "orderId", N: 8},
		"hash(deviceId,2)":  {Func: Hash, Field: "deviceId", N: 2},
		"day( placedAt )":   {Func: Day, Field: "placedAt"},
		"items.sku":         {Func: Plain, Field: "items.sku"},
		"salt(items.sku,1)": {Func: Salt, Field: "items.sku", N: 1},
	}
	for expr, want := range good {
		got, err := ParsePart(expr)
		if err != nil {
			t.Errorf("ParsePart(%q): %v", expr, err)
			continue
		}
		want.Expr = expr
		if got != want {
			t.Errorf("ParsePart(%q) = %+v, want %+v", expr, got, want)
		}
	}
	bad := []string{"", "a b", "1x", "rev(ts)", "salt(x)", "salt(x, 0)", "salt(x, 257)", "hash(x, 17)",
		"reverse(ts", "day(ts, 2)", "salt(x, eight)", "a..b", ".a", "reverse()"}
	for _, expr := range bad {
		if _, err := ParsePart(expr); err == nil {
			t.Errorf("ParsePart(%q) succeeded, want an error", expr)
		}
	}
}

func TestSpecTypeChecks(t *testing.T) {
	for _, exprs := range [][]string{{"day(orderId)"}, {"reverse(status)"}, {"nosuch"}, {}} {
		if _, err := Parse(exprs, orderTypes); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", exprs)
		}
	}
}

// Published test vectors: the salt and hash must never change.
func TestHashesAreStable(t *testing.T) {
	fnvVectors := map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968}
	for in, want := range fnvVectors {
		if got := SaltBucket([]byte(in), 256); got != byte(want%256) {
			t.Errorf("SaltBucket(%q, 256) = %d, want %d", in, got, want%256)
		}
		if got := SaltBucket([]byte(in), 7); got != byte(want%7) {
			t.Errorf("SaltBucket(%q, 7) = %d, want %d", in, got, want%7)
		}
	}
	if got := HashPrefix(nil, 4); !bytes.Equal(got, []byte{0xd4, 0x1d, 0x8c, 0xd9}) {
		t.Errorf("HashPrefix(empty, 4) = %x, want d41d8cd9", got)
	}
}

// Golden keys worked out by hand from the documented encodings.
func TestEncodeGolden(t *testing.T) {
	s := mustSpec(t, "customerId", "reverse(placedAt)", "orderId")
	key, err := s.Encode(Values{"customerId": "c4", "placedAt": int64(1000), "orderId": "o\x001"})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{'c', '4', 0, 1}
	rev := uint64(math.MaxInt64 - 1000)
	for i := 7; i >= 0; i-- {
		want = append(want, byte(rev>>(8*uint(i))))
	}
	want = append(want, 'o', 0, 0xFF, '1', 0, 1)
	if !bytes.Equal(key, want) {
		t.Fatalf("Encode = %x, want %x", key, want)
	}
	n, _ := AppendValue(nil, Int32, -1)
	if !bytes.Equal(n, []byte{0x7F, 0xFF, 0xFF, 0xFF}) {
		t.Errorf("int32 -1 = %x, want 7fffffff", n)
	}
	day, _ := mustSpec(t, "day(placedAt)").Encode(Values{"placedAt": time.Date(1970, 1, 3, 5, 0, 0, 0, time.UTC)})
	if !bytes.Equal(day, []byte{0x80, 0, 0, 2}) {
		t.Errorf("day(1970-01-03) = %x, want 80000002", day)
	}
}

func TestPrefixIsNotAmbiguous(t *testing.T) {
	s := mustSpec(t, "customerId", "reverse(placedAt)", "orderId")
	r, err := s.PrefixBounds(Values{"customerId": "c4"})
	if err != nil || len(r) != 1 {
		t.Fatalf("PrefixBounds = %v, %v", r, err)
	}
	in := func(k []byte) bool { return bytes.Compare(k, r[0].Start) >= 0 && bytes.Compare(k, r[0].Stop) < 0 }
	for cust, want := range map[string]bool{"c4": true, "c42": false, "c": false, "c3": false, "c5": false, "c4\x00": false} {
		k, err := s.Encode(Values{"customerId": cust, "placedAt": int64(5), "orderId": "x"})
		if err != nil {
			t.Fatal(err)
		}
		if in(k) != want {
			t.Errorf("customer %q in the scan of c4: %v, want %v", cust, in(k), want)
		}
	}
}

// randValue draws a value of t, biased towards edge cases.
func randValue(r *rand.Rand, t Type) any {
	switch t {
	case String, Bytes:
		alphabet := []byte{0, 1, 2, 'a', 'b', 0xFE, 0xFF}
		b := make([]byte, r.Intn(5))
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		if t == String {
			return string(b)
		}
		return b
	case Int32:
		edges := []int32{math.MinInt32, -1, 0, 1, math.MaxInt32}
		if r.Intn(3) == 0 {
			return edges[r.Intn(len(edges))]
		}
		return int32(r.Uint32())
	case Int64, Timestamp:
		edges := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
		if r.Intn(3) == 0 {
			return edges[r.Intn(len(edges))]
		}
		return int64(r.Uint64())
	case Bool:
		return r.Intn(2) == 0
	case Float64:
		edges := []float64{math.Inf(-1), -1e300, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, 1e300, math.Inf(1)}
		if r.Intn(2) == 0 {
			return edges[r.Intn(len(edges))]
		}
		return r.NormFloat64() * 1e6
	}
	return nil
}

func cmpValue(t Type, a, b any) int {
	switch t {
	case String:
		return cmp.Compare(a.(string), b.(string))
	case Bytes:
		return bytes.Compare(a.([]byte), b.([]byte))
	case Int32:
		return cmp.Compare(a.(int32), b.(int32))
	case Int64, Timestamp:
		return cmp.Compare(a.(int64), b.(int64))
	case Bool:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case Float64:
		return cmp.Compare(a.(float64), b.(float64))
	}
	panic("unknown type")
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

var allTypes = []Type{String, Int32, Int64, Timestamp, Bool, Bytes, Float64}

// randSpec draws a key of plain and reversed parts over fields f0..fn.
func randSpec(r *rand.Rand) (*Spec, map[string]Type) {
	n := 1 + r.Intn(4)
	types := map[string]Type{}
	var parts []Part
	for i := 0; i < n; i++ {
		name := string(rune('a' + i))
		t := allTypes[r.Intn(len(allTypes))]
		p := Part{Field: name, Type: t, Expr: name}
		if (t == Int64 || t == Timestamp) && r.Intn(2) == 0 {
			p.Func = Reverse
		}
		types[name] = t
		parts = append(parts, p)
	}
	s, err := NewSpec(parts)
	if err != nil {
		panic(err)
	}
	return s, types
}

func randValues(r *rand.Rand, s *Spec) Values {
	v := Values{}
	for _, p := range s.parts {
		x := randValue(r, p.Type)
		if p.Func == Reverse {
			x = absInt64(x.(int64))
		}
		v[p.Field] = x
	}
	return v
}

func absInt64(n int64) int64 {
	if n < 0 {
		if n == math.MinInt64 {
			return math.MaxInt64
		}
		return -n
	}
	return n
}

// tupleCmp compares value tuples the way the key should order them.
func tupleCmp(s *Spec, a, b Values) int {
	for _, p := range s.parts {
		c := cmpValue(p.Type, a[p.Field], b[p.Field])
		if p.Func == Reverse {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func TestPropertyOrderAndRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(20261130))
	for round := 0; round < 300; round++ {
		s, _ := randSpec(r)
		for i := 0; i < 40; i++ {
			a, b := randValues(r, s), randValues(r, s)
			if r.Intn(4) == 0 { // share a prefix so later parts decide
				for _, p := range s.parts[:r.Intn(s.Len())] {
					b[p.Field] = a[p.Field]
				}
			}
			ka, err := s.Encode(a)
			if err != nil {
				t.Fatalf("%s: Encode(%v): %v", s, a, err)
			}
			kb, err := s.Encode(b)
			if err != nil {
				t.Fatalf("%s: Encode(%v): %v", s, b, err)
			}
			if got, want := sign(bytes.Compare(ka, kb)), tupleCmp(s, a, b); got != want {
				t.Fatalf("%s: order of %v vs %v is %d, want %d (keys %x, %x)", s, a, b, got, want, ka, kb)
			}
			back, err := s.DecodeValues(ka)
			if err != nil {
				t.Fatalf("%s: Decode(%x): %v", s, ka, err)
			}
			for f, v := range a {
				if !reflect.DeepEqual(normalizeForCompare(back[f]), normalizeForCompare(v)) {
					t.Fatalf("%s: field %s round-tripped %v -> %v", s, f, v, back[f])
				}
			}
		}
	}
}

func normalizeForCompare(v any) any {
	if b, ok := v.([]byte); ok && len(b) == 0 {
		return []byte{}
	}
	return v
}

// Every full key whose leading values match lies inside the prefix ranges,
// and no other key does; salted keys land in exactly one bucket range.
func TestPropertyPrefixBounds(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	specs := []*Spec{
		mustSpec(t, "customerId", "reverse(placedAt)", "orderId"),
		mustSpec(t, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId"),
		mustSpec(t, "hash(deviceId, 2)", "deviceId", "reverse(ts)"),
		mustSpec(t, "day(placedAt)", "items.sku"),
	}
	gen := func(s *Spec) Values {
		v := Values{}
		for _, p := range s.parts {
			switch p.Type {
			case String:
				v[p.Field] = []string{"", "a", "a\x00", "ab", "b", "OPEN", "OPENED"}[r.Intn(7)]
			case Timestamp:
				v[p.Field] = int64(r.Intn(5)) * msPerDay / 2
			}
		}
		return v
	}
	for _, s := range specs {
		for i := 0; i < 2000; i++ {
			full, probe := gen(s), gen(s)
			// Bind a leading subset of the fields (salt fields may be left out).
			bound := Values{}
			for _, p := range s.parts[:1+r.Intn(s.Len())] {
				if p.Func == Salt && r.Intn(2) == 0 {
					continue
				}
				bound[p.Field] = full[p.Field]
			}
			ranges, err := s.PrefixBounds(bound)
			if err != nil {
				t.Fatalf("%s: PrefixBounds(%v): %v", s, bound, err)
			}
			key, err := s.Encode(probe)
			if err != nil {
				t.Fatal(err)
			}
			hits := 0
			for _, rg := range ranges {
				if bytes.Compare(key, rg.Start) >= 0 && (rg.Stop == nil || bytes.Compare(key, rg.Stop) < 0) {
					hits++
				}
			}
			want := 0
			if matches(s, bound, probe) {
				want = 1
			}
			if hits != want {
				t.Fatalf("%s: key of %v is in %d of the ranges for %v, want %d", s, probe, hits, bound, want)
			}
		}
	}
}

// matches reports whether probe agrees with the bound prefix of the key,
// comparing what the key can see (the day for day parts). Parts after the
// first unbound one (a skipped salt aside) do not narrow a prefix scan.
func matches(s *Spec, bound, probe Values) bool {
	for i, p := range s.parts {
		v, ok := bound[p.Field]
		if !ok {
			if p.Func == Salt && laterBound(s, i, bound) {
				continue
			}
			return true
		}
		a, _ := appendPart(nil, &p, v)
		b, _ := appendPart(nil, &p, probe[p.Field])
		if !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}

func TestPrefixBoundsFanOut(t *testing.T) {
	s := mustSpec(t, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId")
	r, err := s.PrefixBounds(Values{"status": "OPEN"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 8 {
		t.Fatalf("got %d ranges, want 8", len(r))
	}
	for i := 1; i < len(r); i++ {
		if bytes.Compare(r[i-1].Stop, r[i].Start) > 0 {
			t.Errorf("ranges %d and %d overlap or are out of order", i-1, i)
		}
	}
	if b := s.BindFields([]string{"status"}); b.Parts != 2 || b.FanOut != 8 || b.Full {
		t.Errorf("BindFields(status) = %+v", b)
	}
	if _, err := s.PrefixBounds(Values{"status": "OPEN", "orderId": "x", "customerId": "ignored"}); err != nil {
		t.Errorf("orderId binds the salt too: %v", err)
	}
	// A gap: placedAt without status cannot narrow the scan.
	if _, err := s.PrefixBounds(Values{"placedAt": int64(1)}); err == nil {
		t.Error("a value after an unbound part should be an error")
	}
	all, err := s.PrefixBounds(Values{})
	if err != nil || len(all) != 1 || all[0].Start != nil || all[0].Stop != nil {
		t.Errorf("no values should scan everything, got %v, %v", all, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	s := mustSpec(t, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId")
	key, err := s.Encode(Values{"orderId": "o1", "status": "OPEN", "placedAt": int64(99)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decode(key); err != nil {
		t.Fatalf("valid key: %v", err)
	}
	for i := 0; i < len(key); i++ {
		if _, err := s.Decode(key[:i]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d bytes: err = %v, want ErrCorrupt", i, err)
		}
	}
	if _, err := s.Decode(append(append([]byte(nil), key...), 'x')); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: err = %v", err)
	}
	wrongSalt := append([]byte(nil), key...)
	wrongSalt[0] = (wrongSalt[0] + 1) % 8
	if _, err := s.Decode(wrongSalt); !errors.Is(err, ErrCorrupt) {
		t.Errorf("salt that disagrees with orderId: err = %v", err)
	}
	if _, err := mustSpec(t, "reverse(placedAt)").Encode(Values{"placedAt": int64(-1)}); err == nil {
		t.Error("reverse of a negative timestamp should fail")
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		t    Type
		in   any
		want any
	}{
		{Int32, 7, int32(7)}, {Int64, float64(3), int64(3)}, {Timestamp, "1970-01-01T00:00:01Z", int64(1000)},
		{Timestamp, time.UnixMilli(42), int64(42)}, {Float64, 2, float64(2)}, {Bytes, "x", []byte("x")},
	}
	for _, c := range cases {
		got, err := Normalize(c.t, c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Normalize(%v, %v) = %v, %v; want %v", c.t, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		t  Type
		in any
	}{{Int32, int64(1 << 40)}, {Int64, 1.5}, {Float64, math.NaN()}, {Bool, "true"}, {String, 3}, {Timestamp, "yesterday"}} {
		if _, err := Normalize(c.t, c.in); err == nil {
			t.Errorf("Normalize(%v, %v) succeeded", c.t, c.in)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	salted := mustSpec(t, "salt(orderId, 8)", "status")
	keys, err := salted.SplitKeys(8)
	if err != nil || len(keys) != 7 || keys[0][0] != 1 || keys[6][0] != 7 {
		t.Errorf("salt splits = %v, %v", keys, err)
	}
	if keys, _ := salted.SplitKeys(64); len(keys) != 7 {
		t.Errorf("more regions than buckets: %d splits, want 7", len(keys))
	}
	hashed := mustSpec(t, "hash(deviceId, 2)", "deviceId", "reverse(ts)")
	keys, err = hashed.SplitKeys(64)
	if err != nil || len(keys) != 63 {
		t.Fatalf("hash splits = %d, %v", len(keys), err)
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Fatalf("split keys not ascending at %d", i)
		}
	}
	if !bytes.Equal(keys[0], []byte{0x04, 0x00}) {
		t.Errorf("first of 64 splits = %x, want 0400", keys[0])
	}
	if _, err := mustSpec(t, "customerId").SplitKeys(4); err == nil {
		t.Error("an unhashed key should need samples")
	}
	samples := [][]byte{[]byte("d"), []byte("a"), []byte("c"), []byte("b")}
	if got := SplitKeysFromSamples(samples, 2); len(got) != 1 || string(got[0]) != "c" {
		t.Errorf("sample splits = %q", got)
	}
}

func TestDayNumber(t *testing.T) {
	for ms, want := range map[int64]int32{0: 0, msPerDay - 1: 0, msPerDay: 1, -1: -1, -msPerDay: -1, -msPerDay - 1: -2} {
		if got := DayNumber(ms); got != want {
			t.Errorf("DayNumber(%d) = %d, want %d", ms, got, want)
		}
	}
}
