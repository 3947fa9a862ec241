package write

import (
	"context"
	"fmt"
	"testing"

	"github.com/denorm/denorm/event"
)

// TestNewEntitiesReadNoPrimaryRow: an entity whose locator row is empty
// was never written, so its batch reads none of its primary rows; an
// entity the locator knows has every listed row and every row its events
// name read, as before. The store ends as the model says, deletes and a
// stale event after one included.
func TestNewEntitiesReadNoPrimaryRow(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.reset(t, ctx)
	order := func(id string, v int64, cust string, status string) *event.Event {
		return &event.Event{ID: fmt.Sprintf("%s-v%d", id, v), Entity: "order", Op: event.Upsert, Key: map[string]any{"orderId": id}, Version: v,
			State: map[string]any{"orderId": id, "customerId": cust, "placedAt": int64(1_760_000_000_000), "status": status,
				"items": []map[string]any{{"line": int32(1), "sku": "s-1", "quantity": int64(1), "name": "snapshot"}}}}
	}
	del := func(id string, v int64) *event.Event {
		return &event.Event{ID: fmt.Sprintf("%s-d%d", id, v), Entity: "order", Op: event.Delete, Key: map[string]any{"orderId": id}, Version: v}
	}
	cs := &counterCalls{Store: f.ns, table: "orders"}
	w := New(f.plan, withSyncOf(cs, f.st), Options{})
	var all []*event.Event
	for _, step := range []struct {
		name  string
		evs   []*event.Event
		reads int64
	}{
		{"three new orders", []*event.Event{order("o-1", 1, "c-1", "OPEN"), order("o-2", 1, "c-1", "OPEN"), order("o-3", 1, "c-2", "OPEN")}, 0},
		{"an update in place, a move and a new order", []*event.Event{order("o-1", 2, "c-1", "PAID"), order("o-2", 2, "c-9", "OPEN"), order("o-4", 1, "c-1", "OPEN")}, 1 + 2},
		{"a delete", []*event.Event{del("o-3", 2)}, 1},
		{"a stale upsert of the deleted order", []*event.Event{order("o-3", 1, "c-2", "OPEN")}, 1},
		{"a re-creation elsewhere", []*event.Event{order("o-3", 3, "c-5", "OPEN")}, 2},
	} {
		cs.reads.Store(0)
		if _, rej, err := w.Apply(ctx, step.evs); err != nil || len(rej) > 0 {
			t.Fatalf("%s: err %v, rejected %v", step.name, err, rej)
		}
		if n := cs.reads.Load(); n != step.reads {
			t.Errorf("%s: %d primary rows read, want %d", step.name, n, step.reads)
		}
		all = append(all, step.evs...)
	}
	want, _ := model(t, f.plan, all)
	if d := readAll(t, ctx, f.ns, f.plan).diff(want); d != "" {
		t.Errorf("store differs from the model:\n%s", d)
	}
}
