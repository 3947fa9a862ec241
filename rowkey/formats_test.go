package rowkey

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// The key of a table built by hand: <epoch_millis>#<device_id>.
func TestDelimitedTextKey(t *testing.T) {
	s := mustSpec(t, "text(ts, #)", "text(deviceId)")
	k, err := s.Encode(Values{"ts": int64(1764547200000), "deviceId": "dev-7"})
	if err != nil {
		t.Fatal(err)
	}
	if string(k) != "1764547200000#dev-7" {
		t.Fatalf("key %q", k)
	}
	back, err := s.DecodeValues(k)
	if err != nil || back["ts"] != int64(1764547200000) || back["deviceId"] != "dev-7" {
		t.Fatalf("decode %q: %v %v", k, back, err)
	}
	if _, err := s.Encode(Values{"ts": int64(1), "deviceId": "a"}); err != nil {
		t.Fatal(err)
	}
	// A value holding the delimiter would make the key ambiguous.
	s2 := mustSpec(t, "text(deviceId, #)", "text(ts)")
	if _, err := s2.Encode(Values{"ts": int64(1), "deviceId": "a#b"}); err == nil {
		t.Error("a value holding the delimiter must be refused")
	}
	for _, bad := range []string{"1764547200000", "01764547200000#x", "+5#x", "x#dev"} {
		if _, err := s.Decode([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(%q) = %v, want ErrCorrupt", bad, err)
		}
	}
	// A prefix of the first part ends at its delimiter: 176 does not
	// match 1764...
	r, err := s.PrefixBounds(Values{"ts": int64(176)})
	if err != nil || string(r[0].Start) != "176#" {
		t.Errorf("prefix %q, %v", r, err)
	}
	if _, err := Parse([]string{"text(deviceId)", "ts"}, orderTypes); err == nil {
		t.Error("text without a delimiter before another part must be refused")
	}
}

func TestPadKey(t *testing.T) {
	s := mustSpec(t, "pad(n64, 8, _)", "customerId")
	rng := rand.New(rand.NewSource(7))
	var keys [][]byte
	var nums []int64
	for range 200 {
		n := rng.Int63n(100_000_000)
		k, err := s.Encode(Values{"n64": n, "customerId": "c"})
		if err != nil {
			t.Fatal(err)
		}
		if len(k) < 9 || k[8] != '_' {
			t.Fatalf("key %q: want 8 digits and _", k)
		}
		back, err := s.DecodeValues(k)
		if err != nil || back["n64"] != n {
			t.Fatalf("decode %q: %v %v", k, back, err)
		}
		keys, nums = append(keys, k), append(nums, n)
	}
	// Fixed width: keys order as the numbers do.
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return bytes.Compare(keys[idx[a]], keys[idx[b]]) < 0 })
	for i := 1; i < len(idx); i++ {
		if nums[idx[i-1]] > nums[idx[i]] {
			t.Fatalf("keys out of numeric order: %d before %d", nums[idx[i-1]], nums[idx[i]])
		}
	}
	if _, err := s.Encode(Values{"n64": int64(123456789), "customerId": "c"}); err == nil {
		t.Error("nine digits in pad 8 must be refused")
	}
	if _, err := s.Encode(Values{"n64": int64(-1), "customerId": "c"}); err == nil {
		t.Error("a negative pad must be refused")
	}
	r, err := s.RangeBounds(nil, "n64", int64(100), int64(200))
	if err != nil || string(r[0].Start) != "00000100_" || string(r[0].Stop) != "00000200_" {
		t.Errorf("range %q %v", r, err)
	}
}

func TestBitReverseSpreadsASequence(t *testing.T) {
	s := mustSpec(t, "bitrev(n64)")
	first := map[byte]bool{}
	for n := int64(1); n <= 256; n++ {
		k, err := s.Encode(Values{"n64": n})
		if err != nil {
			t.Fatal(err)
		}
		if got := bits.Reverse64(uint64(n)); k[0] != byte(got>>56) {
			t.Fatalf("%d: key %x", n, k)
		}
		first[k[0]] = true
		back, err := s.DecodeValues(k)
		if err != nil || back["n64"] != n {
			t.Fatalf("decode %x: %v %v", k, back, err)
		}
	}
	// 256 consecutive ids lead with 256 distinct bytes.
	if len(first) != 256 {
		t.Errorf("%d distinct first bytes, want 256", len(first))
	}
	if _, err := s.RangeBounds(nil, "n64", int64(1), int64(2)); err == nil {
		t.Error("a range over bitrev must be refused")
	}
	keys, err := s.SplitKeys(4)
	if err != nil || len(keys) != 3 {
		t.Errorf("split keys %x %v", keys, err)
	}
}

func TestHashOfSeveralFields(t *testing.T) {
	s := mustSpec(t, "hash(customerId, orderId, 2)", "customerId", "orderId")
	v := Values{"customerId": "c4", "orderId": "o1"}
	k, err := s.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := AppendValue(nil, String, "c4")
	enc, _ = AppendValue(enc, String, "o1")
	if !bytes.Equal(k[:2], HashPrefix(enc, 2)) {
		t.Fatalf("hash bytes %x, want MD5 prefix of both encodings %x", k[:2], HashPrefix(enc, 2))
	}
	if _, err := s.DecodeValues(k); err != nil {
		t.Fatal(err)
	}
	garbled := append([]byte{k[0] ^ 1}, k[1:]...)
	if _, err := s.Decode(garbled); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a wrong hash must be refused: %v", err)
	}
	// Fixed only when every hashed field is given.
	if b := s.BindFields([]string{"customerId"}); b.Parts != 0 {
		t.Errorf("one of two hashed fields fixes %d parts", b.Parts)
	}
	if b := s.BindFields([]string{"customerId", "orderId"}); !b.Full {
		t.Errorf("both fields: %+v", b)
	}
	r, err := s.PrefixBounds(Values{"customerId": "c4", "orderId": "o1"})
	if err != nil || !bytes.HasPrefix(k, r[0].Start) {
		t.Errorf("prefix %x of %x: %v", r, k, err)
	}
	if got := s.Fields(); len(got) != 2 {
		t.Errorf("fields %v", got)
	}
	if _, err := ParsePart("hash(a, a, 2)"); err == nil {
		t.Error("a field hashed twice must be refused")
	}
}

// AppendEncodeWith asks for each part's fields by position, in the order
// Part.Fields lists them, and a field it lacks is named in the error, a
// hash's later field included.
func TestAppendEncodeWithPositions(t *testing.T) {
	s := mustSpec(t, "salt(orderId, 8)", "hash(customerId, orderId, 2)", "reverse(placedAt)")
	vals := Values{"orderId": "o1", "customerId": "c4", "placedAt": int64(1700000000000)}
	var asked []string
	got, err := s.AppendEncodeWith([]byte("pre"), func(i, k int) (any, bool) {
		f := s.Part(i).Fields()[k]
		asked = append(asked, fmt.Sprintf("%d.%d=%s", i, k, f))
		v, ok := vals[f]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "0.0=orderId 1.0=customerId 1.1=orderId 2.0=placedAt"; strings.Join(asked, " ") != want {
		t.Errorf("asked %v, want %s", asked, want)
	}
	want, err := s.Encode(vals)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append([]byte("pre"), want...)) {
		t.Errorf("AppendEncodeWith gave %x, Encode %x", got, want)
	}
	_, err = s.AppendEncodeWith(nil, func(i, k int) (any, bool) {
		if i == 1 && k == 1 {
			return nil, false
		}
		return vals[s.Part(i).Fields()[k]], true
	})
	if err == nil || !strings.Contains(err.Error(), `no value for "orderId"`) || !strings.Contains(err.Error(), "hash(customerId, orderId, 2)") {
		t.Errorf("a hash's missing second field: %v", err)
	}
}
