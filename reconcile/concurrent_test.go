package reconcile

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// orderHistories makes, per order, versions 1..k of random states, with
// deletes and re-creations; events of one order are in version order.
func orderHistories(r *rand.Rand, orders int) [][]*event.Event {
	statuses := []string{"OPEN", "PAID", "SHIPPED", "CANCELLED"}
	out := make([][]*event.Event, orders)
	for o := range out {
		id := fmt.Sprintf("o%03d", o)
		cust := fmt.Sprintf("c%d", r.Intn(4))
		placed := int64(1_760_000_000_000 + r.Intn(2)*86_400_000 + r.Intn(1000))
		for v := int64(1); v <= int64(2+r.Intn(6)); v++ {
			ev := &event.Event{ID: fmt.Sprintf("%s-%d", id, v), Entity: "order", Key: map[string]any{"orderId": id}, Version: v}
			if v > 1 && r.Intn(5) == 0 {
				ev.Op = event.Delete
				ev.Hints = map[string]any{"customerId": cust, "placedAt": placed}
			} else {
				ev.Op = event.Upsert
				state := map[string]any{"orderId": id, "customerId": cust, "placedAt": placed, "status": statuses[r.Intn(len(statuses))], "totalCents": int64(r.Intn(5000))}
				var items []map[string]any
				for line := int32(1); line <= int32(r.Intn(4)); line++ {
					items = append(items, map[string]any{"line": line, "sku": fmt.Sprintf("s%d", r.Intn(4)), "quantity": int64(1 + r.Intn(3))})
				}
				if items != nil {
					state["items"] = items
				}
				ev.State = state
			}
			out[o] = append(out[o], ev)
		}
	}
	return out
}

// expected is every cell the newest state of each order derives, as
// "table row fam:qual = value" lines.
func expected(t testing.TB, plan *schema.Plan, hist [][]*event.Event) []string {
	var out []string
	ent := plan.Entity("order")
	for _, evs := range hist {
		last := evs[len(evs)-1]
		if last.Op == event.Delete {
			continue
		}
		d, err := layout.Derive(plan, ent, last.State)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Primary {
			out = append(out, line(d.PrimaryTable, d.PrimaryKey, c.Family, c.Qualifier, c.Value))
		}
		for _, it := range d.Items {
			for _, c := range it.Cells {
				out = append(out, line(it.Table, it.Row, c.Family, c.Qualifier, c.Value))
			}
		}
	}
	sort.Strings(out)
	return out
}

// visible is what a reader sees: every cell but the primary rows'
// bookkeeping and the locator's (the writer's own, not a copy), and
// nothing of deleted orders.
func visible(t testing.TB, ctx context.Context, st store.Store, plan *schema.Plan) []string {
	var out []string
	ent := plan.Entity("order")
	for _, tbl := range plan.Tables {
		if tbl.Role == schema.RoleLocator {
			continue
		}
		sc, err := st.Scan(ctx, tbl.Name, store.Scan{})
		if err != nil {
			t.Fatal(err)
		}
		for sc.Next(ctx) {
			r := sc.Row()
			if tbl.Role == schema.RolePrimary {
				s, err := layout.ReadState(plan, ent, tbl, r)
				if err != nil {
					t.Fatal(err)
				}
				if !s.Exists() {
					continue
				}
			}
			for _, c := range r.Cells {
				if tbl.Role == schema.RolePrimary && (layout.IsBookkeeping(c.Qualifier) || layout.IsLive(c.Qualifier)) {
					continue
				}
				out = append(out, line(tbl.Name, r.Key, c.Family, c.Qualifier, c.Value))
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		sc.Close()
	}
	sort.Strings(out)
	return out
}

func line(table string, row []byte, fam string, q, v []byte) string {
	return fmt.Sprintf("%s %s %s:%s = %s", table, store.Printable(row), fam, store.Printable(q), store.Printable(v))
}

// laterEvents is every order's events after its first, each order's in
// order, the orders interleaved.
func laterEvents(r *rand.Rand, hist [][]*event.Event) []*event.Event {
	var rest []*event.Event
	next := make([]int, len(hist))
	for i := range next {
		next[i] = 1
	}
	for {
		var open []int
		for i, evs := range hist {
			if next[i] < len(evs) {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return rest
		}
		i := open[r.Intn(len(open))]
		rest = append(rest, hist[i][next[i]])
		next[i]++
	}
}

// repairWhileApplying runs repairs back to back, each report given to
// seen (when not nil), while w applies evs in batches of one to four, and
// returns how many runs finished.
func repairWhileApplying(t *testing.T, ctx context.Context, plan *schema.Plan, st store.Store, w *write.Writer, r *rand.Rand, evs []*event.Event, seen func(*Report)) int {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var runs int
	var repErr error
	wg.Go(func() {
		for {
			rep, err := Run(ctx, plan, st, Options{})
			if err != nil {
				repErr = err
				return
			}
			runs++
			if seen != nil {
				seen(rep)
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	for len(evs) > 0 {
		n := min(len(evs), 1+r.Intn(4))
		apply(t, ctx, w, evs[:n])
		evs = evs[n:]
	}
	close(done)
	wg.Wait()
	if repErr != nil {
		t.Fatal(repErr)
	}
	return runs
}

// TestConcurrentWriterAndRepair runs the writer and repair runs at the
// same time over the same orders: the store must end as the writer alone
// would leave it, so no repair rolled back a newer write.
func TestConcurrentWriterAndRepair(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, false)
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			hist := orderHistories(r, 40)
			st := openStore(t, plan)
			w := write.New(plan, st, write.Options{})
			var first []*event.Event
			for _, evs := range hist {
				first = append(first, evs[0])
			}
			apply(t, ctx, w, first)
			rest := laterEvents(r, hist)
			runs := repairWhileApplying(t, ctx, plan, st, w, r, rest, nil)
			if runs == 0 {
				t.Fatal("no repair run finished while the writer ran")
			}
			if d := testenv.DiffLines(visible(t, ctx, st, plan), expected(t, plan, hist)); d != "" {
				t.Fatalf("after %d concurrent repair runs the store differs from the model:\n%s", runs, d)
			}
			if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
				t.Fatalf("differences at the end:\n%s", text(rep))
			}
		})
	}
}

// beforeLocatorRead runs hook (once) just before the job's first read of
// the locator table: after the primary scan read a row, before the check
// of its listing.
type beforeLocatorRead struct {
	store.Store
	table string
	hook  func()
}

func (s *beforeLocatorRead) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	if table == s.table && s.hook != nil {
		hook := s.hook
		s.hook = nil
		hook()
	}
	return store.GetMany(ctx, s.Store, table, gets)
}

// TestDeletedBetweenTheScanAndTheLocator is the interleaving that made
// TestConcurrentWriterAndRepair fail one run in about thirty: the job's
// scan reads an order live, the writer deletes it (the row's tombstone,
// then the delete recorded in the locator row, which keeps listing the
// row), and the job then reads a locator row recording a delete newer
// than the state it read. That is the shape of a row a second writer left
// behind, but this row the writer emptied: the job must read it again and
// leave it, not unlist it (a re-creation whose writer had already read the
// listing would then leave the row live and unlisted).
func TestDeletedBetweenTheScanAndTheLocator(t *testing.T) {
	ctx := context.Background()
	plan, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).UnixMilli()
	clock := func() int64 { return now }
	created := orderEvent(t, plan, fmt.Sprintf(`"version":1,"state":{"orderId":"o1","customerId":"c1","status":"OPEN","placedAt":%d,"totalCents":5,"items":[]}`, now-5000), "orders-0", 0)
	deleted := orderEvent(t, plan, `"op":"delete","version":2`, "orders-0", 1)
	stores := &historyStores{t: t, clock: clock}
	defer stores.close()
	want := stores.create(plan)
	wantW := write.New(plan, want, write.Options{Clock: clock})
	apply(t, ctx, wantW, []*event.Event{created})
	apply(t, ctx, wantW, []*event.Event{deleted})

	got := stores.create(plan)
	w := write.New(plan, got, write.Options{Clock: clock})
	apply(t, ctx, w, []*event.Event{created})
	var loc string
	for _, tbl := range plan.Tables {
		if tbl.Role == schema.RoleLocator {
			loc = tbl.Name
		}
	}
	hooked := &beforeLocatorRead{Store: got, table: loc, hook: func() { apply(t, ctx, w, []*event.Event{deleted}) }}
	rep := run(t, ctx, plan, hooked, Options{Clock: clock})
	if hooked.hook != nil {
		t.Fatal("the job never read the locator table")
	}
	if c := rep.kind(KindLocator); c.Stale != 0 || c.Missing != 0 {
		t.Fatalf("the job found %s in a row the writer deleted while it ran", findings(rep))
	}
	if d := testenv.DiffLines(snapshot(t, ctx, got, plan), snapshot(t, ctx, want, plan)); d != "" {
		t.Fatalf("the job changed what the writer wrote (- got, + want):\n%s", d)
	}
}
