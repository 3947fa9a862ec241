package read

import (
	"context"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// racingStore plays a writer that re-puts an index row at a newer version
// just before the reader's repair of that row lands.
type racingStore struct {
	store.Store
	table string
	row   []byte
	put   store.RowMutation
	done  bool
}

func (s *racingStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	if !s.done && table == s.table && string(m.Row) == string(s.row) {
		s.done = true
		if err := s.Store.Mutate(ctx, table, s.put); err != nil {
			return err
		}
	}
	return s.Store.Mutate(ctx, table, m)
}

func TestStaleThinHitsDroppedAndRepaired(t *testing.T) {
	testStaleThinHits(t, newFixture(t, gen.OrdersOptions{Events: 600, Seed: 5, Customers: 40}))
}

// testStaleThinHits injects stale thin-index entries into a fixture's store
// and checks they are never returned, and repaired without deleting a newer
// entry. It runs on the embedded store and on real HBase.
func testStaleThinHits(t *testing.T, f *fixture) {
	ctx := context.Background()
	idx := f.plan.Table("orders_by_status")
	prim := f.plan.Table("orders")
	ent := f.plan.Entity("order")
	// The moved order is the newest one not cancelled, picked the same way
	// every run (f.orders is a map): its stale entries then sort at the head
	// of the newest-first index, inside the first page, which the refill
	// check below depends on.
	live := f.where(func(o map[string]any) bool { return o["status"] != "CANCELLED" })
	if len(live) == 0 {
		t.Fatal("no order to move")
	}
	moved := live[0]
	put := func(st store.Store, status string, o map[string]any, ts int64) []byte {
		t.Helper()
		vals := map[string]any{"orderId": o["orderId"], "status": status, "placedAt": o["placedAt"], "customerId": o["customerId"]}
		return putThinEntry(t, st, idx, prim, vals, ts)
	}
	// An entry left from a status the order had before (it moved on), and
	// one whose order never reached the primary table or is gone.
	movedKey := put(f.st, "CANCELLED", moved, 3)
	ghost := map[string]any{"orderId": "ghost-1", "placedAt": moved["placedAt"], "customerId": "nobody"}
	ghostKey := put(f.st, "CANCELLED", ghost, 4)
	want := ids(f.where(func(m map[string]any) bool { return m["status"] == "CANCELLED" }))
	_ = ent

	r := New(f.plan, f.st, Options{})
	query := func(rd *Reader, repair bool) *Result {
		t.Helper()
		res, err := rd.Run(ctx, Request{Query: "orders_by_status", Values: map[string]any{"status": "CANCELLED"}, Limit: 1000, Repair: repair})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids(res.Rows) {
			if id == moved["orderId"] || id == "ghost-1" {
				t.Fatalf("stale hit %s returned", id)
			}
		}
		if got := ids(res.Rows); len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		return res
	}
	res := query(r, false)
	if res.DroppedStale != 2 || res.Repaired != 0 {
		t.Fatalf("without repair: dropped %d, repaired %d", res.DroppedStale, res.Repaired)
	}
	if row, _ := f.st.Get(ctx, idx.Name, store.Get{Row: movedKey}); row.Empty() {
		t.Fatal("a read without repair deleted an index row")
	}
	// A page exactly as long as the live entries still fills up: the
	// dropped hits are replaced by reading further.
	full, err := r.Run(ctx, Request{Query: "orders_by_status", Values: map[string]any{"status": "CANCELLED"}, Limit: len(want)})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(full.Rows); len(got) != len(want) || full.DroppedStale != 2 {
		t.Fatalf("limit %d: %d rows, %d dropped", len(want), len(got), full.DroppedStale)
	}

	// With repair, a writer re-puts the ghost row at a newer version just
	// before the repair lands: the newer entry must survive.
	newer := store.RowMutation{Row: ghostKey, Mutations: []store.Mutation{{Kind: store.Put, Family: idx.Ref.Family, Qualifier: []byte(idx.Ref.Qualifier), Timestamp: 9, Value: []byte("newer")}}}
	rs := &racingStore{Store: f.st, table: idx.Name, row: ghostKey, put: newer}
	res = query(New(f.plan, rs, Options{}), true)
	if res.DroppedStale != 2 || res.Repaired != 2 {
		t.Fatalf("with repair: dropped %d, repaired %d", res.DroppedStale, res.Repaired)
	}
	if row, _ := f.st.Get(ctx, idx.Name, store.Get{Row: movedKey}); !row.Empty() {
		t.Fatalf("stale row of the moved order survived repair: %+v", row)
	}
	row, err := f.st.Get(ctx, idx.Name, store.Get{Row: ghostKey})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := row.Latest(idx.Ref.Family, []byte(idx.Ref.Qualifier)); !ok || c.Timestamp != 9 {
		t.Fatalf("the newer index entry was deleted by the repair: %+v", row)
	}
	// The moved order's real entry is untouched and still verifies.
	d, err := layout.Derive(f.plan, ent, moved)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range d.Items {
		if it.Table == idx.Name {
			if row, _ := f.st.Get(ctx, idx.Name, store.Get{Row: it.Row}); row.Empty() {
				t.Fatal("the live index row of the moved order is missing")
			}
		}
	}
	// Reads after the repair find only the newer (still stale) entry.
	res = query(r, false)
	if res.DroppedStale != 1 {
		t.Fatalf("after repair: dropped %d, want 1 (the newer entry)", res.DroppedStale)
	}
}

// putThinEntry writes a thin index entry for vals at ts, pointing at the
// primary row vals' key names, whether or not that row exists or still
// derives the entry; it returns the entry's row key.
func putThinEntry(t testing.TB, st store.Store, idx, prim *schema.Table, vals map[string]any, ts int64) []byte {
	t.Helper()
	key, err := idx.Key.Encode(vals)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := prim.Key.Encode(vals)
	if err != nil {
		t.Fatal(err)
	}
	m := store.RowMutation{Row: key, Mutations: []store.Mutation{{Kind: store.Put, Family: idx.Ref.Family, Qualifier: []byte(idx.Ref.Qualifier), Timestamp: ts, Value: pk}}}
	if err := st.Mutate(context.Background(), idx.Name, m); err != nil {
		t.Fatal(err)
	}
	return key
}
