package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// TestInjectedFailures writes the orders example, injects each failure mode
// in known numbers, and checks that a dry run reports exactly those, a
// repair run restores the store as the writer left it, and a second run
// finds nothing.
func TestInjectedFailures(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, false)
	st := openStore(t, plan)
	evs := genEvents(t, plan, gen.OrdersOptions{Events: 800, Seed: 3, SKUs: 30, Renames: 0.1, Deletes: 0.05})
	apply(t, ctx, write.New(plan, st, write.Options{}), evs)

	clean := run(t, ctx, plan, st, Options{DryRun: true})
	if clean.Differences() != 0 || clean.Rows == 0 {
		t.Fatalf("the writer's own output has differences:\n%s", text(clean))
	}
	before := snapshot(t, ctx, st, plan)
	ent := plan.Entity("order")
	ents := primaries(t, ctx, st, plan)

	const (
		ghosts    = 2 // index rows of orders that never existed
		oldStatus = 3 // index rows of an earlier status left behind
		missing   = 4 // per-item index rows lost
		staleCov  = 2 // covering values that differ
		staleCnt  = 1 // an exact contribution with a wrong value
		ghostCnt  = 2 // contributions of orders that never existed
		staleLive = 2 // live copies of an old product name
	)
	for i := 0; i < ghosts; i++ {
		d, err := layout.Derive(plan, ent, map[string]any{"orderId": fmt.Sprintf("ghost-%d", i), "customerId": "c-x", "placedAt": int64(1_760_000_000_000), "status": "OPEN"})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "orders_by_status" {
				mutate(t, ctx, st, it.Table, it.Row, cellPuts(it.Cells, 5)...)
			}
		}
	}
	for i := 0; i < ghostCnt; i++ {
		d, err := layout.Derive(plan, ent, map[string]any{"orderId": fmt.Sprintf("gone-%d", i), "customerId": "c-y", "placedAt": int64(1_760_000_000_000),
			"status": "OPEN", "items": []map[string]any{{"line": int32(1), "sku": "sku00001", "quantity": int64(2)}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "daily_units" {
				mutate(t, ctx, st, it.Table, it.Row, cellPuts(it.Cells, 4)...)
			}
		}
	}
	var withItems, withLive []entityRow
	for _, e := range ents {
		if items, _ := e.state.Values["items"].([]map[string]any); len(items) > 0 {
			withItems = append(withItems, e)
		}
		if len(e.state.Live) > 0 {
			withLive = append(withLive, e)
		}
	}
	if len(ents) < oldStatus || len(withItems) < missing+staleCov+staleCnt || len(withLive) < staleLive {
		t.Fatalf("too few orders to inject into: %d, %d with items, %d with live copies", len(ents), len(withItems), len(withLive))
	}
	for _, e := range ents[:oldStatus] {
		old := map[string]any{}
		for k, v := range e.state.Values {
			old[k] = v
		}
		old["status"] = "OLD"
		d, err := layout.Derive(plan, ent, old)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "orders_by_status" {
				mutate(t, ctx, st, it.Table, it.Row, cellPuts(it.Cells, e.state.Version-1)...)
			}
		}
	}
	skuRow := func(e entityRow, table string) layout.Item {
		d, err := layout.Derive(plan, ent, e.state.Values)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == table {
				return it
			}
		}
		t.Fatalf("no %s row", table)
		return layout.Item{}
	}
	for _, e := range withItems[:missing] {
		it := skuRow(e, "orders_by_sku")
		mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.DeleteFamily, Family: "d", Timestamp: e.state.Version})
	}
	// A crash loses writes rather than leaving markers: compact the
	// markers away, so the rows are missing as if never written.
	if err := st.MajorCompact(ctx, "orders_by_sku"); err != nil {
		t.Fatal(err)
	}
	for _, e := range withItems[missing : missing+staleCov] {
		it := skuRow(e, "orders_by_sku")
		mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("s"), Timestamp: e.state.Version, Value: []byte("WRONG")})
	}
	for _, e := range withItems[missing+staleCov : missing+staleCov+staleCnt] {
		it := skuRow(e, "daily_units")
		mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: it.Family, Qualifier: it.Qualifier, Timestamp: e.state.Version, Value: layout.Int64Cell(999)})
	}
	for _, e := range withLive[:staleLive] {
		for _, c := range e.state.Live {
			mutate(t, ctx, st, "orders", e.row.Key, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp, Value: []byte("an old name")})
			break
		}
	}

	want := map[string]Counts{
		KindIndex:   {Orphaned: ghosts + oldStatus, Missing: missing, Stale: staleCov},
		KindCounter: {Stale: staleCnt, Orphaned: ghostCnt},
		KindLive:    {Stale: staleLive},
		KindLookup:  {},
	}
	dry := run(t, ctx, plan, st, Options{DryRun: true})
	checkCounts(t, "dry run", dry, want)
	fix := run(t, ctx, plan, st, Options{})
	checkCounts(t, "repair", fix, want)
	if fix.Failed() != 0 {
		t.Fatalf("repairs failed:\n%s", text(fix))
	}
	again := run(t, ctx, plan, st, Options{DryRun: true})
	if again.Differences() != 0 {
		t.Fatalf("differences after the repair:\n%s", text(again))
	}
	if d := testenv.DiffLines(before, snapshot(t, ctx, st, plan)); d != "" {
		t.Fatalf("the repaired store differs from the writer's:\n%s", d)
	}
}

// A fast-mode counter bumped twice over is set back to the recomputed sum.
func TestFastCounterDrift(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, true)
	st := openStore(t, plan)
	apply(t, ctx, write.New(plan, st, write.Options{}), genEvents(t, plan, gen.OrdersOptions{Events: 500, Seed: 4, SKUs: 20}))
	run(t, ctx, plan, st, Options{}) // fast mode may drift by design: start exact
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after a repair:\n%s", text(rep))
	}
	const bumped = 3
	sc, err := st.Scan(ctx, "daily_units", store.Scan{Limit: bumped})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]byte
	for sc.Next(ctx) {
		rows = append(rows, bytes.Clone(sc.Row().Key))
	}
	sc.Close()
	if len(rows) != bumped {
		t.Fatalf("%d counter rows", len(rows))
	}
	for _, r := range rows {
		if _, err := st.Increment(ctx, "daily_units", store.Increment{Row: r, Columns: []store.IncrementColumn{{Family: "c", Qualifier: []byte("u"), Delta: 7}}}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]Counts{KindCounter: {Drifted: bumped}}
	checkCounts(t, "dry run", run(t, ctx, plan, st, Options{DryRun: true}), want)
	checkCounts(t, "repair", run(t, ctx, plan, st, Options{}), want)
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after the repair:\n%s", text(rep))
	}
}

func cellPuts(cells []layout.Cell, ts int64) []store.Mutation {
	var ms []store.Mutation
	for _, c := range cells {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: ts, Value: c.Value})
	}
	return ms
}

// checkCounts compares the differences of a report with want (valid and
// repaired counts are not compared).
func checkCounts(t *testing.T, what string, rep *Report, want map[string]Counts) {
	t.Helper()
	for _, k := range []string{KindIndex, KindLookup, KindCounter, KindLive, KindLocator} {
		got := rep.Kinds[k]
		w := want[k]
		if got == nil {
			got = &Counts{} // a kind the schema has but no row met
		}
		if got.Missing != w.Missing || got.Stale != w.Stale || got.Orphaned != w.Orphaned || got.Drifted != w.Drifted {
			t.Errorf("%s, %s: got missing %d stale %d orphaned %d drifted %d, want %d %d %d %d", what, k,
				got.Missing, got.Stale, got.Orphaned, got.Drifted, w.Missing, w.Stale, w.Orphaned, w.Drifted)
		}
	}
	if t.Failed() {
		t.Fatalf("%s report:\n%s", what, text(rep))
	}
}

func text(r *Report) string {
	var b bytes.Buffer
	r.WriteText(&b)
	j, _ := json.Marshal(r)
	return b.String() + string(j)
}
