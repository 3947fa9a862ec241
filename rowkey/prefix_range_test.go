package rowkey

import (
	"bytes"
	"math"
	"math/rand"
	"testing"
)

// AppendPrefixRange gives, for every field of every spec and any value,
// what PrefixBounds gives for that field alone: the same one range, the
// same whole table, or an error where PrefixBounds errs or fans out. It
// leaves dst's bytes alone and caps both slices it returns.
func TestAppendPrefixRangeIsPrefixBounds(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	specs := []*Spec{
		mustSpec(t, "customerId", "reverse(placedAt)", "orderId"),
		mustSpec(t, "salt(orderId, 8)", "orderId", "status"),
		mustSpec(t, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId"),
		mustSpec(t, "hash(deviceId, 2)", "deviceId", "reverse(ts)"),
		mustSpec(t, "hash(customerId, orderId, 2)", "customerId", "orderId"),
		mustSpec(t, "day(placedAt)", "items.sku"),
		mustSpec(t, "pad(n64, 6)", "orderId"),
		mustSpec(t, "n64", "orderId"),         // MaxInt64: a prefix of 0xFF only, no stop
		mustSpec(t, "reverse(n64)", "status"), // 0: a prefix ending in 0xFF
	}
	values := []any{"", "a", "a\x00", "ab", "\xff\xff", "OPEN", int64(0), int64(-1), int64(86_400_000), int32(7), int64(math.MaxInt64)}
	for _, s := range specs {
		for _, p := range s.parts {
			for i := 0; i < 50; i++ {
				v := values[r.Intn(len(values))]
				want, wantErr := s.PrefixBounds(Values{p.Field: v})
				dst := []byte("keep")[:r.Intn(5)]
				kept := string(dst)
				start, stop, err := s.AppendPrefixRange(dst, p.Field, v)
				if wantErr != nil || len(want) != 1 {
					if err == nil {
						t.Fatalf("%s, %s=%q: no error, want one (PrefixBounds: %d ranges, %v)", s, p.Field, v, len(want), wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s, %s=%q: %v", s, p.Field, v, err)
				}
				if !bytes.Equal(start, want[0].Start) || !bytes.Equal(stop, want[0].Stop) || (start == nil) != (want[0].Start == nil) || (stop == nil) != (want[0].Stop == nil) {
					t.Fatalf("%s, %s=%q: range [%x, %x), want [%x, %x)", s, p.Field, v, start, stop, want[0].Start, want[0].Stop)
				}
				if string(dst) != kept {
					t.Fatalf("%s, %s=%q: dst changed to %q", s, p.Field, v, dst)
				}
				if cap(start) != len(start) || cap(stop) != len(stop) {
					t.Fatalf("%s, %s=%q: start cap %d len %d, stop cap %d len %d", s, p.Field, v, cap(start), len(start), cap(stop), len(stop))
				}
			}
		}
	}
}

// PrefixEnd, from literal cases: the reference AppendPrefixRange's test
// compares with computes its stops the same way, so those cannot show a
// wrong end by themselves.
func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ prefix, want []byte }{
		{[]byte("ab"), []byte("ac")},
		{[]byte{'a', 0xFF}, []byte("b")},
		{[]byte{'a', 0xFE, 0xFF, 0xFF}, []byte{'a', 0xFF}},
		{[]byte{0xFF, 0xFF}, nil},
		{[]byte{}, nil},
		{nil, nil},
	} {
		got := PrefixEnd(c.prefix)
		if !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", c.prefix, got, c.want)
		}
		// After other bytes, which stay as they were.
		out, ok := appendPrefixEnd([]byte("kept"), c.prefix)
		if string(out) != "kept"+string(c.want) || ok != (c.want != nil) {
			t.Errorf("appendPrefixEnd(kept, %x) = %q, %v; want kept then %x", c.prefix, out, ok, c.want)
		}
	}
}
