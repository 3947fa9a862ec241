package rowkey

import (
	"bytes"
	"cmp"
	"math"
	"testing"
)

var fuzzSpecs = [][]string{
	{"customerId", "reverse(placedAt)", "orderId"},
	{"salt(orderId, 8)", "status", "reverse(placedAt)", "orderId"},
	{"day(placedAt)", "items.sku"},
	{"hash(deviceId, 2)", "deviceId", "reverse(ts)"},
	{"n32", "n64", "b", "raw", "f", "reverse(n32)"},
	{"text(placedAt, #)", "text(customerId)"},
	{"pad(n64, 12, |)", "bitrev(n32)", "hash(customerId, orderId, 2)", "customerId", "orderId"},
}

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic, and a key
// it accepts must be the canonical encoding of what it returned.
func FuzzDecode(f *testing.F) {
	specs := make([]*Spec, len(fuzzSpecs))
	for i, e := range fuzzSpecs {
		specs[i] = mustSpec(f, e...)
	}
	f.Add(uint8(0), []byte("c4\x00\x01\x7f\xff\xff\xff\xff\xff\xff\xffo1\x00\x01"))
	f.Add(uint8(1), []byte{3, 'O', 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 'x', 0, 1})
	f.Add(uint8(3), []byte{0xab, 0xcd, 'd', 0, 0xFF, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(4), []byte{0x80, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 2, 1, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(5), []byte("1764547200000#dev-7"))
	f.Add(uint8(6), []byte("000000000042|\x80\x00\x00\x00\xab\xcdc4\x00\x01o1\x00\x01"))
	f.Fuzz(func(t *testing.T, which uint8, key []byte) {
		s := specs[int(which)%len(specs)]
		parts, err := s.Decode(key)
		if err != nil {
			return
		}
		vals := Values{}
		whole := true
		for _, d := range parts {
			if d.Part.Recoverable() {
				vals[d.Part.Field] = d.Value
			}
		}
		for _, p := range s.parts {
			for _, f := range p.Fields() {
				if _, ok := vals[f]; !ok {
					whole = false // a derived part whose field the key does not carry
				}
			}
		}
		if !whole {
			return
		}
		again, err := s.Encode(vals)
		if err != nil {
			t.Fatalf("%s: decoded %x to %v, which does not encode: %v", s, key, vals, err)
		}
		if !bytes.Equal(again, key) {
			t.Fatalf("%s: %x decodes to %v, which encodes to %x", s, key, vals, again)
		}
	})
}

// FuzzRoundTrip encodes fuzzed values, checks they decode to themselves, and
// that two tuples order as their keys do.
func FuzzRoundTrip(f *testing.F) {
	s := mustSpec(f, "hash(raw, 2)", "customerId", "n32", "reverse(placedAt)", "f", "b", "raw")
	f.Add("c4", "c42", int32(-1), int32(1), int64(0), int64(5), 1.5, -2.0, true, []byte{0}, []byte{0, 0})
	f.Add("", "\x00", int32(math.MinInt32), int32(math.MaxInt32), int64(math.MaxInt64), int64(1), math.Inf(1), math.Inf(-1), false, []byte{}, []byte{0xFF})
	f.Fuzz(func(t *testing.T, s1, s2 string, n1, n2 int32, t1, t2 int64, f1, f2 float64, b bool, r1, r2 []byte) {
		if math.IsNaN(f1) || math.IsNaN(f2) || t1 < 0 || t2 < 0 {
			return
		}
		a := Values{"customerId": s1, "n32": n1, "placedAt": t1, "f": f1, "b": b, "raw": r1}
		c := Values{"customerId": s2, "n32": n2, "placedAt": t2, "f": f2, "b": b, "raw": r2}
		ka, err := s.Encode(a)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := s.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := s.DecodeValues(ka)
		if err != nil {
			t.Fatalf("Decode(%x): %v", ka, err)
		}
		if back["customerId"] != s1 || back["n32"] != n1 || back["placedAt"] != t1 || back["b"] != b ||
			back["f"] != f1+0 || !bytes.Equal(back["raw"].([]byte), r1) {
			t.Fatalf("round trip %v -> %v", a, back)
		}
		// Past the hash prefix, the keys order as the tuples do.
		if bytes.Equal(ka[:2], kc[:2]) {
			want := cmp.Compare(s1, s2)
			for _, c := range []int{cmp.Compare(n1, n2), -cmp.Compare(t1, t2), cmp.Compare(f1, f2), 0, bytes.Compare(r1, r2)} {
				if want == 0 {
					want = c
				}
			}
			if got := sign(bytes.Compare(ka, kc)); got != want {
				t.Fatalf("order of %v vs %v: keys say %d, values %d", a, c, got, want)
			}
		}
	})
}
