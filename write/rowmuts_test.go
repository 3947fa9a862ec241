package write

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/denorm/denorm/store"
)

// sorted returns rows in bytewise order of their keys, one row mutation per
// key holding that key's mutations in the order added: on random keys that
// share long prefixes, are shorter than eight bytes, or are prefixes of one
// another with zero bytes after.
func TestRowMutsSorted(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	for round := 0; round < 200; round++ {
		var rm rowMuts
		type added struct {
			row []byte
			ts  int64
		}
		var all []added
		for i := 0; i < 1+r.Intn(60); i++ {
			row := make([]byte, r.Intn(12))
			for j := range row {
				row[j] = alphabet[r.Intn(len(alphabet))]
			}
			if len(all) > 0 && r.Intn(4) == 0 {
				row = all[r.Intn(len(all))].row // a row added again
			}
			ts := int64(i)
			rm.add("t", row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("q"), Timestamp: ts})
			all = append(all, added{row, ts})
		}
		out := rm.sorted("t")
		n := 0
		for k, m := range out {
			if k > 0 && bytes.Compare(out[k-1].Row, m.Row) >= 0 {
				t.Fatalf("round %d: row %x after %x", round, m.Row, out[k-1].Row)
			}
			var want []int64
			for _, a := range all {
				if bytes.Equal(a.row, m.Row) {
					want = append(want, a.ts)
				}
			}
			if len(want) != len(m.Mutations) {
				t.Fatalf("round %d: row %x has %d mutations, want %d", round, m.Row, len(m.Mutations), len(want))
			}
			for j, x := range m.Mutations {
				if x.Timestamp != want[j] {
					t.Fatalf("round %d: row %x mutations %v out of the order added %v", round, m.Row, m.Mutations, want)
				}
			}
			n += len(m.Mutations)
		}
		if n != len(all) {
			t.Fatalf("round %d: %d mutations out of %d", round, n, len(all))
		}
	}
}
