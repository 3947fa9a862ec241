package reconcile

import (
	"context"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// TestLocatorNewerWriteOwnsTheRow: a primary row whose listing is gone is
// missing, and listed again by a repair; but when the locator row holds a
// cell newer than the state read, the writer moved or deleted the entity
// since, and the job leaves the row to it (its repair would sit under the
// marker that unlisted the row).
func TestLocatorNewerWriteOwnsTheRow(t *testing.T) {
	ctx := context.Background()
	sp := loadPlan(t, false)
	st := openStore(t, sp)
	ev := &event.Event{ID: "o-1-v1", Entity: "order", Op: event.Upsert, Key: map[string]any{"orderId": "o-1"}, Version: 1,
		State: map[string]any{"orderId": "o-1", "customerId": "c-1", "placedAt": int64(1_760_000_000_000), "status": "OPEN"}}
	apply(t, ctx, write.New(sp, st, write.Options{}), []*event.Event{ev})
	prim, loc := sp.Primary("order"), sp.Locator("order")
	rows := primaries(t, ctx, st, sp)
	if len(rows) != 1 {
		t.Fatalf("%d orders", len(rows))
	}
	pk := rows[0].row.Key
	lk, err := layout.LocatorRow(prim, loc, pk)
	if err != nil {
		t.Fatal(err)
	}
	fam, q := layout.BookFamily(loc), layout.LocationQualifier(pk)
	locator := func(rep *Report) Counts { return *rep.kind(KindLocator) }

	if c := locator(run(t, ctx, sp, st, Options{DryRun: true})); c.Valid != 1 || c.Missing != 0 {
		t.Fatalf("as written: %+v, want 1 valid", c)
	}
	// The listing lost.
	mutate(t, ctx, st, loc.Name, lk, store.Mutation{Kind: store.DeleteVersion, Family: fam, Qualifier: q, Timestamp: 1})
	if c := locator(run(t, ctx, sp, st, Options{DryRun: true})); c.Missing != 1 {
		t.Fatalf("listing lost: %+v, want 1 missing", c)
	}
	// A newer cell: a move in flight.
	mutate(t, ctx, st, loc.Name, lk, store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.LocationQualifier([]byte("elsewhere")), Timestamp: 2})
	if c := locator(run(t, ctx, sp, st, Options{DryRun: true})); c.Valid != 1 || c.Missing != 0 {
		t.Fatalf("a newer write in flight: %+v, want the row left to it (1 valid)", c)
	}
}
