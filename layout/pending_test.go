package layout

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

func TestPendingRoundTrip(t *testing.T) {
	refs := []Ref{{Table: "a", Row: []byte("r"), Family: "c", Qualifier: []byte("q")}, {Table: "b", Row: []byte{0}}}
	for _, at := range []*Position{nil, {Stream: 1<<64 - 1, Offset: 0}, {Stream: 3, Offset: 1 << 40}, {Stream: 0, Offset: -1}} {
		for _, rs := range [][]Ref{nil, refs} {
			b := EncodePending(rs, at)
			got, gotAt, err := DecodePending(b)
			if err != nil {
				t.Fatalf("%v %v: %v", rs, at, err)
			}
			if len(got) != len(rs) || !sameRefs(got, rs) {
				t.Fatalf("refs %+v, want %+v", got, rs)
			}
			if !reflect.DeepEqual(gotAt, at) {
				t.Fatalf("position %+v, want %+v", gotAt, at)
			}
		}
	}
	// A record written before positions: its refs, and no position.
	got, at, err := DecodePending(EncodeRefs(refs))
	if err != nil || at != nil || len(got) != 2 {
		t.Fatalf("refs-only record: %v %v %v", got, at, err)
	}
	// DecodeRefs stays strict: a position is bytes it does not know.
	if _, err := DecodeRefs(EncodePending(refs, &Position{1, 2})); err == nil {
		t.Fatal("DecodeRefs took a position")
	}
	b := EncodePending(refs, &Position{Stream: 9, Offset: 300})
	for i := len(EncodeRefs(refs)) + 1; i < len(b); i++ {
		if _, _, err := DecodePending(b[:i]); err == nil {
			t.Fatalf("position cut to %d bytes decoded", i)
		}
	}
	if _, _, err := DecodePending(append(bytes.Clone(b), 0)); err == nil {
		t.Fatal("a byte after the position decoded")
	}
	bad := bytes.Clone(b)
	bad[len(EncodeRefs(refs))] = 0x02
	if _, _, err := DecodePending(bad); err == nil {
		t.Fatal("an unknown tag after the refs decoded")
	}
}

// FuzzDecodePending: whatever decodes encodes again to a record that
// decodes the same.
func FuzzDecodePending(f *testing.F) {
	f.Add(EncodePending([]Ref{{Table: "t", Row: []byte("r")}}, &Position{Stream: 5, Offset: 9}))
	f.Add(EncodeRefs([]Ref{{Table: "t", Row: []byte("r"), Family: "f", Qualifier: []byte("q")}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		refs, at, err := DecodePending(b)
		if err != nil {
			return
		}
		refs2, at2, err := DecodePending(EncodePending(refs, at))
		if err != nil {
			t.Fatalf("re-encoded record: %v", err)
		}
		if !reflect.DeepEqual(at, at2) || len(refs) != len(refs2) {
			t.Fatalf("re-encoded record differs: %+v %+v, was %+v %+v", refs2, at2, refs, at)
		}
		if !sameRefs(refs, refs2) {
			t.Fatalf("re-encoded refs differ: %+v, was %+v", refs2, refs)
		}
	})
}

// sameRefs reports whether a and b hold the same refs as sets (EncodeRefs
// sorts).
func sameRefs(a, b []Ref) bool {
	if len(a) != len(b) {
		return false
	}
	for _, r := range a {
		if !slices.ContainsFunc(b, func(x Ref) bool { return x.Compare(r) == 0 }) {
			return false
		}
	}
	return true
}
