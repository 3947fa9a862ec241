package rowkey

import (
	"bytes"
	"reflect"
	"testing"
)

// Every cut of a whole key decodes to the whole parts before the cut, and
// says how many bytes of a part cut short are left over.
func TestDecodePrefix(t *testing.T) {
	s := mustSpec(t, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId")
	key, err := s.Encode(Values{"orderId": "o1", "status": "OPEN", "placedAt": int64(1700000000000)})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := s.Decode(key)
	if err != nil {
		t.Fatal(err)
	}
	ends := []int{}
	n := 0
	for _, d := range whole {
		n += len(d.Raw)
		ends = append(ends, n)
	}
	for cut := 0; cut <= len(key); cut++ {
		parts, rest, err := s.DecodePrefix(key[:cut])
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		wantParts, wantEnd := 0, 0
		for i, e := range ends {
			if e <= cut {
				wantParts, wantEnd = i+1, e
			}
		}
		if len(parts) != wantParts || rest != cut-wantEnd {
			t.Fatalf("cut %d: %d parts, %d bytes left; want %d parts, %d left", cut, len(parts), rest, wantParts, cut-wantEnd)
		}
		for i, d := range parts {
			if !reflect.DeepEqual(d.Value, whole[i].Value) || !bytes.Equal(d.Raw, whole[i].Raw) {
				t.Fatalf("cut %d part %d: %v, want %v", cut, i, d.Value, whole[i].Value)
			}
		}
	}
	if _, _, err := s.DecodePrefix([]byte{9}); err == nil {
		t.Error("a salt byte past the bucket count decoded")
	}
}

// FuzzDecodePrefix: arbitrary bytes never panic, and the parts read are
// the bytes they came from, in order.
func FuzzDecodePrefix(f *testing.F) {
	specs := make([]*Spec, len(fuzzSpecs))
	for i, e := range fuzzSpecs {
		specs[i] = mustSpec(f, e...)
	}
	f.Add(uint8(0), []byte("c4\x00\x01\x7f\xff\xff"))
	f.Add(uint8(1), []byte{3, 'O', 0, 1, 0, 0})
	f.Add(uint8(2), []byte{0x80, 0, 0x4e, 0x20, 's', 'k', 'u', 0})
	f.Fuzz(func(t *testing.T, which uint8, key []byte) {
		s := specs[int(which)%len(specs)]
		parts, rest, err := s.DecodePrefix(key)
		if err != nil {
			if len(parts) != 0 {
				t.Fatalf("error with %d parts", len(parts))
			}
			return
		}
		var got []byte
		for _, d := range parts {
			got = append(got, d.Raw...)
		}
		if !bytes.Equal(got, key[:len(key)-rest]) {
			t.Fatalf("parts cover %x, want %x", got, key[:len(key)-rest])
		}
	})
}
