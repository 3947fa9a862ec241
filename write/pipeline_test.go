package write

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv/memlog"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// slowBatches holds every Batch call a moment, so that the next batch is
// staged while the last one is written, as on a remote store.
type slowBatches struct{ store.Store }

func (s slowBatches) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	time.Sleep(200 * time.Microsecond)
	return s.Store.Batch(ctx, table, ms)
}

// TestRunAheadConverges: Run on a log that reads ahead stages each batch
// while the one before it is written. In log order, and with a crash after
// every possible write followed by a restart from the last commit, every
// history ends in the model's state, with counters in mode exact and in
// mode bounded.
func TestRunAheadConverges(t *testing.T) {
	seed := int64(20261202)
	n := max(historyCount()/20, 10)
	if *histories > 0 {
		n = *histories
	}
	for _, mode := range []string{"exact", "bounded"} {
		t.Run(mode, func(t *testing.T) {
			t.Logf("%d histories from seed %d", n, seed)
			setup := func(t testing.TB) *fixture {
				f := newFixture(t)
				if mode == "bounded" {
					f.plan = boundedPlan(t)
				}
				return f
			}
			inShards(t, n, setup, func(t *testing.T, f *fixture, h int) { convergeAhead(t, f, mode == "bounded", seed, h) })
		})
	}
}

func convergeAhead(t *testing.T, f *fixture, bounded bool, seed int64, h int) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed + int64(h)))
	// More entities than TestConvergence's, so that a batch holds
	// entities of the one before it and others.
	evs := historyOf(r, 2+r.Intn(5), "", true)
	want, wantUnits := model(t, f.plan, evs)
	if bounded {
		delete(want, "daily_units")
	}
	check := func(name string) {
		t.Helper()
		got := readAll(t, ctx, f.ns, f.plan)
		var gu map[string]int64
		if bounded {
			delete(got, "daily_units")
			gu = boundedUnits(t, ctx, f.ns, f.plan, "")
		} else {
			gu = counterSums(t, f.plan, got)
		}
		if d := got.diff(want); d != "" {
			t.Fatalf("history %d (seed %d), %s: store differs from the model:\n%s", h, seed+int64(h), name, d)
		}
		if fmt.Sprint(gu) != fmt.Sprint(wantUnits) {
			t.Fatalf("history %d (seed %d), %s: units %v, want %v", h, seed+int64(h), name, gu, wantUnits)
		}
	}
	// Each log run whole, then with a crash after every third write
	// (every write for short runs) and a restart from the last commit: in
	// order, and shuffled with duplicates, where a replay may come after
	// a newer version of its entity.
	crashAhead(t, f, h, interleave(r, evs), "in order", check)
	crashAhead(t, f, h, withDuplicates(r, append([]*event.Event(nil), evs...), evs), "shuffled", check)
}

// crashAhead runs log through Run whole, then with a crash after every
// write (every third for runs of over 60 writes) and a restart from the
// last commit, and checks the store after each.
func crashAhead(t *testing.T, f *fixture, h int, log []*event.Event, name string, check func(string)) {
	t.Helper()
	ctx := context.Background()
	runLog := func(cs *crashStore) bool {
		return runAheadOn(t, ctx, f.plan, cs, withSyncOf(slowBatches{cs}, f.st), memlog.New(t, "log", 0, log, int64(h)), f.clock)
	}
	f.reset(t, ctx)
	cs := &crashStore{Store: refuseStore{f.ns}, budget: -1}
	runLog(cs)
	check(name)
	total := cs.writes
	step := 1
	if total > 60 {
		step = 3
	}
	for k := 0; k < total; k += step {
		f.reset(t, ctx)
		cs := &crashStore{Store: refuseStore{f.ns}, budget: k, then: alsoAfter(int64(h)<<20+int64(k), total)}
		if !runLog(cs) {
			t.Fatalf("history %d: crash at write %d of %d never happened", h, k, total)
		}
		check(name + ", " + cs.crashed(total))
	}
}

// runAheadOn runs Run over lg to its end on st, a store over cs, with
// writers measuring TTLs by clock (nil: the system clock), restarting from
// the last commit after each crash cs injects (a restarted process crashes
// as cs.then says), and reports whether one came. Every dead letter must
// be a poisoned event.
func runAheadOn(t testing.TB, ctx context.Context, plan *schema.Plan, cs *crashStore, st store.Store, lg *memlog.Log, clock func() int64) (crashed bool) {
	t.Helper()
	for {
		dl := &memlog.DeadLetters{}
		_, err := Run(ctx, New(plan, st, Options{Clock: clock}), lg, dl, RunOptions{BatchSize: 6})
		for _, rec := range dl.Recs {
			if !containsPoison(rec.Data) {
				t.Fatalf("dead letter %s is not a poisoned event", rec.Data)
			}
		}
		if err == nil {
			return crashed
		}
		if !errors.Is(err, errCrash) {
			t.Fatal(err)
		}
		crashed = true
		cs.restart()
		lg.Restart()
	}
}

func containsPoison(b []byte) bool {
	var m struct{ ID string }
	return json.Unmarshal(b, &m) == nil && len(m.ID) > len(poisonMark) && m.ID[len(m.ID)-len(poisonMark):] == poisonMark
}

// TestStageWaitsForHeldEntities stages a batch while the one before it is
// not yet written: the entities both hold are read after that batch's
// writes, the others at once, and the store ends as applying the two
// batches one after the other leaves it. Staged early without the batch
// being written named, the second batch's update of the shared order
// reads the order's old row and leaves the store wrong: the test would see
// a deferral that stopped working.
func TestStageWaitsForHeldEntities(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	order := func(id string, v int64, placed int64, status string) *event.Event {
		return &event.Event{ID: fmt.Sprintf("%s-v%d", id, v), Entity: "order", Key: map[string]any{"orderId": id}, Version: v, Op: event.Upsert,
			State: map[string]any{"orderId": id, "customerId": "c-1", "placedAt": placed, "status": status, "totalCents": v,
				"items": []map[string]any{{"line": int32(1), "sku": "s-1", "quantity": v, "name": "n"}}}}
	}
	first := []*event.Event{order("o-1", 1, 1_760_000_000_000, "OPEN"), order("o-2", 1, 1_760_000_000_000, "OPEN")}
	// o-1 moves to another row (placedAt corrected); o-3 is new.
	second := []*event.Event{order("o-1", 2, 1_760_000_086_400, "PAID"), order("o-3", 1, 1_760_000_000_000, "OPEN")}
	want, wantUnits := model(t, f.plan, append(append([]*event.Event(nil), first...), second...))

	apply := func(named bool) tableState {
		f.reset(t, ctx)
		w := New(f.plan, withSyncOf(f.ns, f.st), Options{})
		b1, err := w.stage(ctx, first, nil, newStats(len(first)), nil)
		if err != nil {
			t.Fatal(err)
		}
		var bz *busy
		if named {
			bz = busyOf(b1)
		}
		b2, err := w.stage(ctx, second, nil, newStats(len(second)), bz)
		if err != nil {
			t.Fatal(err)
		}
		if named {
			if len(b2.later) != 1 || b2.later[0].events[0].ev.Key["orderId"] != "o-1" {
				t.Fatalf("staged against the first batch, %d groups wait for it; want the one of o-1", len(b2.later))
			}
		}
		if _, _, err := w.finish(ctx, b1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.finish(ctx, b2); err != nil {
			t.Fatal(err)
		}
		return readAll(t, ctx, f.ns, f.plan)
	}
	got := apply(true)
	if d := got.diff(want); d != "" {
		t.Fatalf("store differs from the two batches applied in turn:\n%s", d)
	}
	if gu := counterSums(t, f.plan, got); fmt.Sprint(gu) != fmt.Sprint(wantUnits) {
		t.Fatalf("units %v, want %v", gu, wantUnits)
	}
	if apply(false).diff(want) == "" {
		t.Fatal("staged without naming the batch being written, the store still matched: this test cannot see a broken deferral")
	}
}
