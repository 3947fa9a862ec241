package layout

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// LocateAll cuts every ref's lookup rows from one buffer: each must be
// what locating the ref alone gives, and no ref's rows may share bytes
// with another's, whatever the keys' lengths (long ones outgrow the
// buffer's estimate and move to arrays of their own).
func TestLocateAllIsLocateEach(t *testing.T) {
	plan := ordersPlan(t)
	ent := plan.Entity("order")
	rng := rand.New(rand.NewPCG(3, 9))
	for round := range 200 {
		var items []map[string]any
		for line := range 1 + rng.IntN(12) {
			sku := fmt.Sprintf("s%d", rng.IntN(50))
			switch rng.IntN(6) {
			case 0:
				sku = strings.Repeat("x", 1+rng.IntN(300)) // longer than any estimate
			case 1:
				sku = "a\x00b\xff" // bytes the key escapes
			}
			items = append(items, map[string]any{"line": int32(line), "sku": sku, "quantity": int64(1)})
		}
		state := map[string]any{"orderId": "o1", "customerId": "c1", "placedAt": int64(5), "items": items}
		all, err := LiveKeys(plan, ent, state)
		if err != nil {
			t.Fatal(err)
		}
		if err := LocateAll(all); err != nil {
			t.Fatal(err)
		}
		for i := range all {
			one := all[i]
			one.Row, one.Stop = nil, nil
			if err := one.Locate(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(one.Row, all[i].Row) || !bytes.Equal(one.Stop, all[i].Stop) || (one.Stop == nil) != (all[i].Stop == nil) {
				t.Fatalf("round %d ref %q: LocateAll gave %x..%x, Locate %x..%x", round, all[i].Key, all[i].Row, all[i].Stop, one.Row, one.Stop)
			}
		}
		// The same through a buffer too small for most refs: those that do
		// not fit go to arrays of their own, and the buffer stays usable.
		small := make([]LiveRef, len(all))
		copy(small, all)
		buf := make([]byte, 0, 8+rng.IntN(40))
		for i := range small {
			if buf, err = small[i].locateIn(buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(small[i].Row, all[i].Row) || !bytes.Equal(small[i].Stop, all[i].Stop) {
				t.Fatalf("round %d ref %q: located in a small buffer as %x..%x, alone %x..%x", round, all[i].Key, small[i].Row, small[i].Stop, all[i].Row, all[i].Stop)
			}
		}
		for i := range small {
			if !bytes.Equal(small[i].Row, all[i].Row) || !bytes.Equal(small[i].Stop, all[i].Stop) {
				t.Fatalf("round %d ref %q: its rows changed as later refs were located in a small buffer", round, all[i].Key)
			}
		}
		// Apart: appending to any row or stop leaves every other as it was.
		var want [][]byte
		for _, lr := range all {
			want = append(want, bytes.Clone(lr.Row), bytes.Clone(lr.Stop))
		}
		for i := range all {
			all[i].Row = append(all[i].Row, 0xAA, 0xAA, 0xAA)
			all[i].Stop = append(all[i].Stop, 0xBB, 0xBB, 0xBB)
		}
		for i, lr := range all {
			if !bytes.Equal(lr.Row[:len(lr.Row)-3], want[2*i]) || !bytes.Equal(lr.Stop[:len(lr.Stop)-3], want[2*i+1]) {
				t.Fatalf("round %d ref %q: its rows changed when others were appended to", round, lr.Key)
			}
		}
	}
}
