package write

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/internal/testenv/memlog"
	"github.com/denorm/denorm/schema"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase"
	"github.com/denorm/denorm/store/pebble"
)

func hbasePlan(t testing.TB) *schema.Plan {
	return testenv.HBaseSchema(t, "../examples/orders.yaml")
}

// liveHBase opens the real HBase of the test environment, with the orders
// tables under a name prefix of this run's own, dropped at the end.
func liveHBase(t testing.TB) *nsStore {
	t.Helper()
	st := testenv.OpenHBase(t, "w")
	if _, err := ddl.Create(context.Background(), st, hbasePlan(t)); err != nil {
		t.Fatal(err)
	}
	return st
}

// The orders example end to end on real HBase: a generated stream with
// reordering, duplicates, deletes and product renames, applied from a file,
// ends in the same state as on the embedded store.
func TestHBaseOrdersEndToEnd(t *testing.T) {
	hb := liveHBase(t)
	ctx := context.Background()
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: 1500, Seed: 5, Reorder: 0.1, Duplicate: 0.1, Deletes: 0.03, Renames: 0.03}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := hbasePlan(t)
	apply := func(st store.Store, offsets string) RunStats {
		src, err := source.OpenFile(path, source.FileOptions{OffsetPath: filepath.Join(dir, offsets)})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dl, err := source.OpenDeadLetterFile(filepath.Join(dir, offsets+".dead"))
		if err != nil {
			t.Fatal(err)
		}
		defer dl.Close()
		stats, err := Run(ctx, New(plan, st, Options{}), src, dl, RunOptions{BatchSize: 250})
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	pst, err := pebble.Open(ctx, filepath.Join(dir, "db"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pst.Close()
	if _, err := ddl.Create(ctx, pst, plan); err != nil {
		t.Fatal(err)
	}
	ps := apply(pst, "pebble.offset")
	hs := apply(hb, "hbase.offset")
	if hs.DeadLetters != 0 || hs.Applied != ps.Applied || hs.Applied == 0 {
		t.Fatalf("hbase applied %d (dead %d), pebble %d", hs.Applied, hs.DeadLetters, ps.Applied)
	}
	if d := readAll(t, ctx, hb, plan).diff(readAll(t, ctx, pst, plan)); d != "" {
		t.Fatalf("HBase and the embedded store differ:\n%s", d)
	}
}

// The convergence property on real HBase, at a smaller size: in order,
// shuffled with duplicates, and with crashes at random writes of both. Each run
// keeps to its own ids in shared tables.
func TestHBaseConvergence(t *testing.T) {
	hb := liveHBase(t)
	ctx := context.Background()
	// The example counts in mode bounded; the copy in mode exact keeps one
	// contribution per order. The tables are the same.
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exactPath := filepath.Join(t.TempDir(), "orders_exact.yaml")
	if err := os.WriteFile(exactPath, []byte(strings.Replace(string(b), "mode: bounded", "mode: exact", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, plan := range []*schema.Plan{testenv.HBaseSchema(t, exactPath), hbasePlan(t)} {
		runs = hbaseConverge(t, ctx, hb, plan, runs)
	}
}

// hbaseConverge runs TestHBaseConvergence's histories in one counter mode.
func hbaseConverge(t *testing.T, ctx context.Context, hb store.Store, plan *schema.Plan, runs int) int {
	bounded := plan.Table("daily_units").Counter.Bounded()
	for h := 0; h < 12; h++ {
		seed := int64(31000 + h)
		r := rand.New(rand.NewSource(seed))
		base := historyNS(r, 1+r.Intn(3), "")
		for variant := 0; variant < 5; variant++ {
			runs++
			ns := fmt.Sprintf("R%dx", runs)
			evs := historyNS(rand.New(rand.NewSource(seed)), len(entitiesOf(base)), ns)
			want, wantUnits := model(t, plan, evs)
			log := interleave(r, evs)
			budget := -1
			switch variant {
			case 1:
				log = withDuplicates(r, log, evs)
			case 2, 3:
				budget = r.Intn(20)
			case 4:
				log = withDuplicates(r, log, evs)
				budget = r.Intn(20)
			}
			cs := &crashStore{Store: hb, budget: budget}
			if variant >= 3 {
				// Run on a log that reads ahead, restarted from its last
				// commit after the crash: in order, and shuffled with
				// duplicates (a replay may come after a newer version).
				runAheadOn(t, ctx, plan, cs, cs, memlog.New(t, "log", 0, log, seed), nil)
			} else {
				applyInBatches(t, ctx, New(plan, cs, Options{}), cs, log, r)
			}
			got := readAllNS(t, ctx, hb, plan, ns)
			var gu map[string]int64
			if bounded {
				// Bounded rows hold totals: compared as units below.
				delete(got, "daily_units")
				delete(want, "daily_units")
				gu = boundedUnits(t, ctx, hb, plan, ns)
			} else {
				gu = counterSums(t, plan, got)
			}
			if d := got.diff(want); d != "" {
				t.Fatalf("history %d (seed %d) variant %d (bounded %v) differs from the model:\n%s", h, seed, variant, bounded, d)
			}
			if fmt.Sprint(gu) != fmt.Sprint(wantUnits) {
				t.Fatalf("history %d variant %d (bounded %v): units %v, want %v", h, variant, bounded, gu, wantUnits)
			}
		}
	}
	return runs
}

// applyInBatches applies log in batches of 1 to 5 events, with sizes from
// r; after a crash cs injects, the batch is applied again, on a store that
// no longer crashes.
func applyInBatches(t *testing.T, ctx context.Context, w *Writer, cs *crashStore, log []*event.Event, r *rand.Rand) {
	t.Helper()
	for off := 0; off < len(log); {
		end := min(off+1+r.Intn(5), len(log))
		_, rej, err := applyIsolating(ctx, w, log[off:end])
		if errors.Is(err, errCrash) {
			cs.restart()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range rej {
			if !strings.Contains(x.Event.ID, poisonMark) {
				t.Fatalf("rejected %s: %v", x.Event.ID, x.Reason)
			}
		}
		off = end
	}
}

func entitiesOf(evs []*event.Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range evs {
		if e.Entity == "order" {
			out[e.Key["orderId"].(string)] = true
		}
	}
	return out
}

// BenchmarkApplyHBase: the orders apply throughput on real HBase, the same
// stream and batches as BenchmarkApply on the embedded store.
func BenchmarkApplyHBase(b *testing.B) {
	evs := benchStream(b)[:5000]
	plan := hbasePlan(b)
	ctx := context.Background()
	var cells int
	for b.Loop() {
		b.StopTimer()
		hb := liveHBase(b)
		rec := &recorder{Store: hb}
		w := New(plan, rec, Options{})
		b.StartTimer()
		for off := 0; off < len(evs); off += 1000 {
			if _, _, err := w.Apply(ctx, evs[off:min(off+1000, len(evs))]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cells = len(rec.keys)
		b.StartTimer()
	}
	report(b, len(evs), cells)
}

// Schemas other than the orders example on real HBase: composite keys,
// float, bool and bytes values, partial and salted tables, TTLs (with
// events a day past them) and live copies of two references to one
// entity. A history of each (testenv.History) applied through Run, in log
// order and shuffled with duplicates and a crash, ends on HBase as in log
// order on the embedded store.
func TestHBaseSchemas(t *testing.T) {
	ctx := context.Background()
	for _, file := range []string{"../examples/device_events.yaml", "testdata/tickets.yaml"} {
		plan := testenv.HBaseSchema(t, file)
		t.Run(plan.Name, func(t *testing.T) {
			r := rand.New(rand.NewSource(20261206))
			evs := testenv.History(t, r, plan, testenv.HistoryOptions{Entities: 30, Now: time.Now().UnixMilli(), WallClock: true})
			inOrder := testenv.Interleave(r, evs, testenv.EntityOf(plan))
			shuffled := withDuplicates(r, append([]*event.Event(nil), evs...), evs)

			pst, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL})
			if err != nil {
				t.Fatal(err)
			}
			defer pst.Close()
			if _, err := ddl.Create(ctx, pst, plan); err != nil {
				t.Fatal(err)
			}
			cs := &crashStore{Store: pst, budget: -1}
			runAheadOn(t, ctx, plan, cs, withSyncOf(cs, pst), memlog.New(t, "log", 0, inOrder, 1), nil)
			want := readAll(t, ctx, pst, plan)
			if len(want[plan.Primary(plan.Entities[0].Name).Name]) == 0 {
				t.Fatal("the history left no primary row")
			}
			for _, run := range []struct {
				name   string
				log    []*event.Event
				budget int
			}{{"in order", inOrder, -1}, {"shuffled with duplicates and a crash", shuffled, r.Intn(40)}} {
				hb := testenv.OpenHBase(t, "s")
				if _, err := ddl.Create(ctx, hb, plan); err != nil {
					t.Fatal(err)
				}
				cs := &crashStore{Store: hb, budget: run.budget}
				if crashed := runAheadOn(t, ctx, plan, cs, cs, memlog.New(t, "log", 0, run.log, 1), nil); crashed != (run.budget >= 0) {
					t.Fatalf("%s, %s: crashed %v with a budget of %d writes", plan.Name, run.name, crashed, run.budget)
				}
				if d := readAll(t, ctx, hb, plan).diff(want); d != "" {
					t.Fatalf("%s, %s: HBase differs from the embedded store:\n%s", plan.Name, run.name, d)
				}
			}
		})
	}
}
