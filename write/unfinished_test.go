package write

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/denorm/denorm/event"
)

// TestAdvancePastUnfinishedWrite: a batch the store refuses is cut in
// halves (applyIsolating); the half after the refused event writes an
// order's version 2, which adds a product line, and the process crashes
// somewhere in that write. The resumed batch holds the refused version 3
// (now folded through, never written), the replay of version 2 (stale by
// then) and version 4, which keeps version 2's lines as they were. The
// advance from the stored version 2 must finish its write: delete what it
// replaced and write its copies, which version 4 derives unchanged. At
// every crash point the store ends as the model's.
func TestAdvancePastUnfinishedWrite(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	order := func(v int64, status string, skus ...string) *event.Event {
		id := fmt.Sprintf("o-1-v%d", v)
		if status == refusedStatus {
			id += poisonMark
		}
		var items []map[string]any
		for i, s := range skus {
			items = append(items, map[string]any{"line": int32(i + 1), "sku": s, "quantity": int64(2), "name": "snapshot"})
		}
		st := map[string]any{"orderId": "o-1", "customerId": "c-1", "placedAt": int64(1_760_000_000_000), "status": status, "totalCents": v * 100}
		if items != nil {
			st["items"] = items
		}
		return &event.Event{ID: id, Entity: "order", Key: map[string]any{"orderId": "o-1"}, Version: v, Op: event.Upsert, State: st}
	}
	log := positioned([]*event.Event{
		order(1, "OPEN", "s-0"),
		order(3, refusedStatus, "s-0"),
		order(2, "PAID", "s-0", "s-1"),
		order(4, "PAID", "s-0", "s-1"),
	}, "log")
	first := [][2]int{{0, 1}, {1, 3}, {3, 4}} // the batches of the first process
	want, wantUnits := model(t, f.plan, log)

	apply := func(cs *crashStore) bool {
		w := New(f.plan, withSyncOf(cs, f.st), Options{})
		for _, b := range first {
			_, rej, err := applyIsolating(ctx, w, log[b[0]:b[1]])
			if errors.Is(err, errCrash) {
				// The next process reads the log from the failed batch
				// on, in one batch.
				cs.restart()
				w = New(f.plan, withSyncOf(cs, f.st), Options{})
				if _, _, err := applyIsolating(ctx, w, log[b[0]:]); err != nil {
					t.Fatal(err)
				}
				return true
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rej {
				if !strings.Contains(r.Event.ID, poisonMark) {
					t.Fatalf("rejected %s: %v", r.Event.ID, r.Reason)
				}
			}
		}
		return false
	}
	f.reset(t, ctx)
	counted := &crashStore{Store: refuseStore{f.ns}, budget: -1}
	apply(counted)
	total := counted.writes
	for k := 0; k < total; k++ {
		f.reset(t, ctx)
		cs := &crashStore{Store: refuseStore{f.ns}, budget: k}
		if !apply(cs) {
			t.Fatalf("crash after write %d of %d never happened", k, total)
		}
		got := readAll(t, ctx, f.ns, f.plan)
		if d := got.diff(want); d != "" {
			t.Fatalf("%s: store differs from the model:\n%s", cs.crashed(total), d)
		}
		if gu := counterSums(t, f.plan, got); fmt.Sprint(gu) != fmt.Sprint(wantUnits) {
			t.Fatalf("%s: units %v, want %v", cs.crashed(total), gu, wantUnits)
		}
	}
}
