package rowkey

import (
	"errors"
	"testing"
)

// DecodeValuesInto adds a key's values to the caller's map and leaves what
// the map held; a key of more parts than its stack buffer holds decodes
// as well as a short one, and a garbled derived part is still refused.
func TestDecodeValuesInto(t *testing.T) {
	long := mustSpec(t, "salt(orderId, 8)", "customerId", "status", "reverse(placedAt)", "orderId",
		"deviceId", "ts", "n32", "n64", "b", "f")
	in := Values{"orderId": "o-1", "customerId": "c-9", "status": "PAID", "placedAt": int64(1764547200000),
		"deviceId": "d", "ts": int64(7), "n32": int32(-3), "n64": int64(1) << 40, "b": true, "f": 2.5}
	k, err := long.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	dst := Values{"status": "kept", "extra": 1}
	if err := long.DecodeValuesInto(k, dst); err != nil {
		t.Fatal(err)
	}
	for f, v := range in {
		want := v
		if f == "status" {
			want = "kept"
		}
		if dst[f] != want {
			t.Errorf("%s = %v (%T), want %v", f, dst[f], dst[f], want)
		}
	}
	if dst["extra"] != 1 || len(dst) != len(in)+1 {
		t.Errorf("map after decoding: %v", dst)
	}
	// The salt byte comes first: another bucket no longer matches orderId.
	bad := append([]byte{}, k...)
	bad[0] = (bad[0] + 1) % 8
	if err := long.DecodeValuesInto(bad, Values{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbled salt: %v, want ErrCorrupt", err)
	}
}
