package reconcile

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// TestSinceWindow: with Since, counter rows of days before it are neither
// reported nor repaired, those of days after it are; index rows are checked
// whole either way.
func TestSinceWindow(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, false)
	st := openStore(t, plan)
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	evs := genEvents(t, plan, gen.OrdersOptions{Events: 300, Seed: 7, SKUs: 10, Start: start})
	// One order placed a month earlier, through the writer like the rest.
	old := start.AddDate(0, -1, 0).UnixMilli()
	line := fmt.Sprintf(`{"id":"old-1","entity":"order","key":"old-order","version":1,"op":"upsert","state":{"orderId":"old-order","customerId":"c000001","placedAt":%d,"status":"OPEN","totalCents":100,"items":[{"line":1,"sku":"sku00001","quantity":3}]}}`, old)
	ev, err := event.Decode(plan, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, ctx, write.New(plan, st, write.Options{}), append(evs, ev))
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("the writer's own output has differences:\n%s", text(rep))
	}

	ent := plan.Entity("order")
	contribution := func(vals map[string]any) layout.Item {
		t.Helper()
		d, err := layout.Derive(plan, ent, vals)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "daily_units" {
				return it
			}
		}
		t.Fatal("no daily_units contribution")
		return layout.Item{}
	}
	ghost := func(id string, placed int64) {
		it := contribution(map[string]any{"orderId": id, "customerId": "c-y", "placedAt": placed, "status": "OPEN",
			"items": []map[string]any{{"line": int32(1), "sku": "sku00002", "quantity": int64(2)}}})
		mutate(t, ctx, st, it.Table, it.Row, cellPuts(it.Cells, 4)...)
	}
	// Outside the window: two contributions of orders that never existed
	// and a wrong value in the old order's own contribution.
	ghost("gone-old-1", old)
	ghost("gone-old-2", old+1000)
	var oldState *layout.State
	for _, e := range primaries(t, ctx, st, plan) {
		if e.state.Values["orderId"] == "old-order" {
			oldState = e.state
		}
	}
	if oldState == nil {
		t.Fatal("the old order is not in the store")
	}
	it := contribution(oldState.Values)
	mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: it.Family, Qualifier: it.Qualifier, Timestamp: oldState.Version, Value: layout.Int64Cell(999)})
	// Inside: one ghost and one wrong value of a recent order.
	ghost("gone-new-1", start.Add(10*time.Minute).UnixMilli())
	var recent *layout.State
	for _, e := range primaries(t, ctx, st, plan) {
		if items, _ := e.state.Values["items"].([]map[string]any); len(items) > 0 && e.state.Values["orderId"] != "old-order" {
			recent = e.state
			break
		}
	}
	if recent == nil {
		t.Fatal("no recent order with items")
	}
	it = contribution(recent.Values)
	mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: it.Family, Qualifier: it.Qualifier, Timestamp: recent.Version, Value: layout.Int64Cell(999)})

	since := start.Add(-time.Hour) // the day before the stream: its counter row is in
	inWindow := map[string]Counts{KindCounter: {Stale: 1, Orphaned: 1}}
	checkCounts(t, "windowed dry run", run(t, ctx, plan, st, Options{DryRun: true, Since: since}), inWindow)
	checkCounts(t, "windowed plan/run/merge", runParts(t, ctx, plan, st, 3, Options{DryRun: true, Since: since}), inWindow)
	checkCounts(t, "windowed --shard 0/2 + 1/2", addReports(
		run(t, ctx, plan, st, Options{DryRun: true, Since: since, Shard: Shard{I: 0, N: 2}}),
		run(t, ctx, plan, st, Options{DryRun: true, Since: since, Shard: Shard{I: 1, N: 2}})), inWindow)
	checkCounts(t, "full dry run", run(t, ctx, plan, st, Options{DryRun: true}), map[string]Counts{KindCounter: {Stale: 2, Orphaned: 3}})
	checkCounts(t, "windowed repair", run(t, ctx, plan, st, Options{Since: since}), inWindow)
	checkCounts(t, "windowed rerun", run(t, ctx, plan, st, Options{DryRun: true, Since: since}), nil)
	// The old rows were left alone: a full run still finds them.
	checkCounts(t, "full dry run after", run(t, ctx, plan, st, Options{DryRun: true}), map[string]Counts{KindCounter: {Stale: 1, Orphaned: 2}})
	checkCounts(t, "full plan/run/merge after", runParts(t, ctx, plan, st, 2, Options{DryRun: true}), map[string]Counts{KindCounter: {Stale: 1, Orphaned: 2}})
}

func addReports(rs ...*Report) *Report {
	sum := newReport(true)
	for _, r := range rs {
		sum.Add(r)
	}
	return sum
}

func TestTimePart(t *testing.T) {
	types := map[string]rowkey.Type{"at": rowkey.Timestamp, "sku": rowkey.String, "n": rowkey.Int64}
	typeOf := func(f string) (rowkey.Type, bool) { ty, ok := types[f]; return ty, ok }
	cases := []struct {
		key  []string
		want int
	}{
		{[]string{"salt(sku, 4)", "day(at)", "sku"}, 1},
		{[]string{"sku", "reverse(at)"}, 1},
		{[]string{"at", "sku"}, 0},
		{[]string{"sku", "n"}, -1},
	}
	for _, c := range cases {
		spec, err := rowkey.Parse(c.key, typeOf)
		if err != nil {
			t.Fatal(err)
		}
		if got := timePart(spec); got != c.want {
			t.Errorf("%v: time part %d, want %d", c.key, got, c.want)
		}
	}
	// A window over a key without a time part covers every row.
	spec, err := rowkey.Parse([]string{"sku", "n"}, typeOf)
	if err != nil {
		t.Fatal(err)
	}
	plan := &schema.Plan{}
	w := newWindow(plan, time.Now())
	w.keys["totals"] = windowKey{table: &schema.Table{Name: "totals", Key: spec}, part: timePart(spec)}
	key, err := spec.Encode(rowkey.Values{"sku": "a", "n": int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !w.covers("totals", key) {
		t.Fatal("a key without a time part fell outside the window")
	}
	at, err := rowkey.Parse([]string{"at", "sku"}, typeOf)
	if err != nil {
		t.Fatal(err)
	}
	w.keys["by_at"] = windowKey{table: &schema.Table{Name: "by_at", Key: at}, part: 0}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{time.Now().Add(-time.Hour), false}, {time.Now().Add(time.Hour), true}} {
		key, err := at.Encode(rowkey.Values{"at": c.at.UnixMilli(), "sku": "a"})
		if err != nil {
			t.Fatal(err)
		}
		if got := w.covers("by_at", key); got != c.want {
			t.Errorf("timestamp %v: covered %v, want %v", c.at, got, c.want)
		}
	}
}
