package write

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
)

// fastPlan is the orders schema with the daily counter in fast mode.
func fastPlan(t testing.TB) *schema.Plan {
	t.Helper()
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "mode: bounded", "mode: fast", 1)
	if src == string(b) {
		t.Fatal("orders.yaml has no bounded counter to turn fast")
	}
	p, err := schema.Parse("orders-fast.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// In fast mode everything but the counters matches the model exactly, and
// every counter difference is in a row the reconcile job recomputes: a
// counter row whose key some state of the history derives. Without crashes,
// deletes or item changes, the counters are exact.
func TestFastCountersDrift(t *testing.T) {
	ctx := context.Background()
	plan := fastPlan(t)
	f := newFixture(t)
	f.plan = plan
	n := historyCount() / 5
	for h := 0; h < n; h++ {
		r := rand.New(rand.NewSource(int64(7000 + h)))
		evs := history(r, 1+r.Intn(4))
		want, _ := model(t, plan, evs)
		keys := map[string]bool{} // counter rows any state derives
		for _, e := range evs {
			if e.Op != event.Upsert || e.Entity != "order" {
				continue
			}
			d, err := layout.Derive(plan, plan.Entity("order"), e.State)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range d.Increments {
				keys[string(in.Row)] = true
			}
		}
		f.reset(t, ctx)
		cs := &crashStore{Store: f.ns, budget: r.Intn(40)}
		log := append([]*event.Event(nil), evs...)
		r.Shuffle(len(log), func(i, j int) { log[i], log[j] = log[j], log[i] })
		w := New(plan, withSyncOf(cs, f.st), Options{})
		for off := 0; off < len(log); {
			end := min(off+1+r.Intn(4), len(log))
			if _, _, err := w.Apply(ctx, log[off:end]); err != nil {
				cs.mu.Lock()
				cs.budget = -1
				cs.mu.Unlock()
				continue
			}
			off = end
		}
		got := readAll(t, ctx, f.ns, plan)
		counters := got["daily_units"]
		delete(got, "daily_units")
		delete(want, "daily_units")
		if d := got.diff(want); d != "" {
			t.Fatalf("history %d: non-counter tables differ from the model:\n%s", h, d)
		}
		for row := range counters {
			if !keys[row] {
				t.Fatalf("history %d: counter row %q is derived by no state: reconcile could not recompute it", h, row)
			}
		}
	}
}

// With each order written once, in order, fast counters are exact.
func TestFastCountersExactWithoutRetries(t *testing.T) {
	ctx := context.Background()
	plan := fastPlan(t)
	f := newFixture(t)
	f.plan = plan
	f.reset(t, ctx)
	var evs []*event.Event
	want := map[string]int64{}
	for i := 0; i < 50; i++ {
		st := map[string]any{"orderId": fmt.Sprintf("o%d", i), "customerId": "c", "status": "OPEN", "placedAt": int64(86_400_000 * (i % 3)),
			"items": []map[string]any{{"line": int32(1), "sku": fmt.Sprintf("s%d", i%4), "quantity": int64(i%5 + 1)}}}
		evs = append(evs, &event.Event{Entity: "order", Key: map[string]any{"orderId": st["orderId"]}, Version: 1, Op: event.Upsert, State: st})
		want[fmt.Sprintf("%d|s%d", i%3, i%4)] += int64(i%5 + 1)
	}
	if _, _, err := New(plan, withSyncOf(f.ns, f.st), Options{}).Apply(ctx, evs); err != nil {
		t.Fatal(err)
	}
	got := counterSums(t, plan, readAll(t, ctx, f.ns, plan))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fast counters %v, want %v", got, want)
	}
}
