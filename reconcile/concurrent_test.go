package reconcile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/internal/testenv/memlog"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// orderHistories makes, per order, versions 1..k of random states, with
// deletes and re-creations; events of one order are in version order.
// With moves, an order's customer (part of its row key) changes in a
// quarter of its versions, so it moves between rows.
func orderHistories(r *rand.Rand, orders int, moves bool) [][]*event.Event {
	statuses := []string{"OPEN", "PAID", "SHIPPED", "CANCELLED"}
	out := make([][]*event.Event, orders)
	for o := range out {
		id := fmt.Sprintf("o%03d", o)
		cust := fmt.Sprintf("c%d", r.Intn(4))
		placed := int64(1_760_000_000_000 + r.Intn(2)*86_400_000 + r.Intn(1000))
		for v := int64(1); v <= int64(2+r.Intn(6)); v++ {
			if moves && v > 1 && r.Intn(4) == 0 {
				cust = fmt.Sprintf("c%d", r.Intn(4))
			}
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
	tails := make([][]*event.Event, len(hist))
	for i, evs := range hist {
		tails[i] = evs[1:]
	}
	return interleaved(r, tails)
}

// interleaved is every event of hist, each history's in order, the
// histories mixed at random.
func interleaved(r *rand.Rand, hist [][]*event.Event) []*event.Event {
	var out []*event.Event
	next := make([]int, len(hist))
	for {
		var open []int
		for i, evs := range hist {
			if next[i] < len(evs) {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		i := open[r.Intn(len(open))]
		out = append(out, hist[i][next[i]])
		next[i]++
	}
}

// productHistories makes, per SKU the orders reference, versions of a
// product: renames (a name repeats now and then, a price change alone),
// deletes and re-creations, so that the orders' live copies of the name
// are refreshed, removed and copied again while the job checks them.
func productHistories(r *rand.Rand) [][]*event.Event {
	var out [][]*event.Event
	for k := range 4 {
		sku := fmt.Sprintf("s%d", k)
		var evs []*event.Event
		for v := int64(1); v <= int64(1+r.Intn(5)); v++ {
			ev := &event.Event{ID: fmt.Sprintf("%s-%d", sku, v), Entity: "product", Key: map[string]any{"sku": sku}, Version: v}
			if v > 1 && r.Intn(4) == 0 {
				ev.Op = event.Delete
			} else {
				ev.Op = event.Upsert
				ev.State = map[string]any{"sku": sku, "name": fmt.Sprintf("name %d of %s", v/2, sku), "priceCents": int64(r.Intn(500))}
			}
			evs = append(evs, ev)
		}
		out = append(out, evs)
	}
	return out
}

// repairShapeWhile runs repairs of st in the given shape back to back,
// each report given to seen (when not nil), until writeAll returns, and
// returns how many runs finished and how many died. With crashJob, about
// half the runs get a budget of row writes drawn from it, small enough
// that a run with repairs to make dies part of the way through them (a
// job's process killed), and the next starts afresh.
func repairShapeWhile(t *testing.T, ctx context.Context, plan *schema.Plan, st store.Store, shape jobShape, crashJob *rand.Rand, seen func(*Report), writeAll func()) (runs, died int) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var repErr error
	wg.Go(func() {
		for {
			js := st
			if crashJob != nil && crashJob.Intn(2) == 0 {
				js, _ = testenv.Crashing(st, crashJob.Intn(6), crashJob)
			}
			rep, err := shape.repair(ctx, plan, js)
			switch {
			case errors.Is(err, testenv.ErrCrashed):
				died++
			case err != nil:
				repErr = err
				return
			default:
				runs++
				if seen != nil {
					seen(rep)
				}
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	writeAll()
	close(done)
	wg.Wait()
	if repErr != nil {
		t.Fatal(repErr)
	}
	return runs, died
}

// jobShape is a way a repair job runs: in one process, as shards side by
// side (each reading every primary row, repairing its own ranges), or
// planned, run in parts at once and merged (the Indexed Job's way). The
// parts and the merge read the store at different moments, and the shards'
// repairs run beside each other's as well as the writer's.
type jobShape int

const (
	oneProcess jobShape = iota
	twoShards
	plannedParts
	jobShapes // how many there are
)

func (s jobShape) String() string {
	return [...]string{"one-process", "two-shards", "planned-parts"}[s]
}

// shapeRangeRows cuts the test's few dozen orders into several ranges per
// derived table, so that parts own ranges of their own.
const shapeRangeRows = 16

// repair runs one repair of st in shape s and returns its report, the
// parts' or shards' reports added up.
func (s jobShape) repair(ctx context.Context, plan *schema.Plan, st store.Store) (*Report, error) {
	const n = 2
	switch s {
	case twoShards:
		reps := make([]*Report, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				reps[i], errs[i] = Run(ctx, plan, st, Options{Shard: Shard{I: i, N: n}, Plan: PlanOptions{RangeRows: shapeRangeRows}})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		for _, rep := range reps[1:] {
			reps[0].Add(rep)
		}
		return reps[0], nil
	case plannedParts:
		p, err := NewPlan(ctx, plan, st, PlanOptions{Parts: n, RangeRows: shapeRangeRows})
		if err != nil {
			return nil, err
		}
		parts := make([]*Partial, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { parts[i], errs[i] = RunPart(ctx, plan, st, p, i, Options{}) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		return Merge(ctx, plan, st, p, parts, Options{})
	default:
		return Run(ctx, plan, st, Options{})
	}
}

var concurrentHistories = flag.Int("concurrent-histories", 6, "histories TestConcurrentWriterAndRepair runs for each case")

// TestConcurrentWriterAndRepair runs the writer and repair runs at the
// same time over the same orders: the store must end as the writer alone
// would leave it, so no repair rolled back a newer write. The orders stay
// in their rows, or move between rows (the locator check then meets rows
// a move is under way in), with daily_units exact, bounded (whose repairs
// judge the writer's records against a batch in flight) or fast. Each
// history is a variant besides (variantOf): the job's scans, snapshot or
// row by row as on HBase, where a scan can meet a moving order twice or
// not at all; the job's shape; the writers' streams, pipeline and
// crashes; the job's crashes; products that change.
func TestConcurrentWriterAndRepair(t *testing.T) {
	seeds := *concurrentHistories
	if testing.Short() {
		seeds = 2
	}
	for _, c := range concurrentCases {
		plan := loadPlan(t, c.fast)
		if c.bounded {
			plan = boundedPlan(t)
		}
		for seed := int64(1); seed <= int64(seeds); seed++ {
			v := variantOf(seed)
			t.Run(fmt.Sprintf("%s/%d", c.name, seed), func(t *testing.T) {
				st := openStore(t, plan)
				job := st
				if v.rowByRow {
					job = testenv.RowByRow(st)
				}
				concurrentHistory(t, plan, st, job, openStore(t, plan), seed, c.moves, v)
			})
		}
	}
}

// variant is how a history of TestConcurrentWriterAndRepair runs, beyond
// its case: seeds take turns at each choice, so that a soak of a few dozen
// seeds meets every combination.
type variant struct {
	rowByRow  bool     // the job's scans read row by row (testenv.RowByRow)
	shape     jobShape // the job's shape
	pipelined bool     // the writers write through write.Run's pipeline
	// streams is how many writers apply the log at once, each its own
	// partition of the orders (a consumer group of that many members).
	streams int
	// crashes: each writer dies once, part of its way through a batch,
	// and a new one replays its stream from the last commit while the job
	// goes on.
	crashes bool
	// products: the log also renames, deletes and re-creates the
	// products the orders copy names from (live copies).
	products bool
	// jobCrashes: about half the repair runs die part of the way through
	// their writes.
	jobCrashes bool
	// repartitioned: the two streams are a topic that got its second
	// partition halfway through the log, so that two writers apply some
	// orders' events at once, which leaves differences that only repairs
	// after the writers stop remove (docs/reconcile.md, "Locators").
	repartitioned bool
}

func variantOf(seed int64) variant {
	v := variant{rowByRow: seed%2 == 0, shape: jobShape(seed % int64(jobShapes)), pipelined: seed%4 >= 2, streams: 1}
	if seed%5 >= 3 {
		v.streams = 2
	}
	v.crashes = seed%7 >= 4
	v.products = seed%6 >= 3
	v.jobCrashes = seed%8 >= 5
	v.repartitioned = v.streams == 2 && (seed/5)%2 == 0
	return v
}

func (v variant) String() string {
	scans, writes := "snapshot scans", "batches applied"
	if v.rowByRow {
		scans = "row-by-row scans"
	}
	if v.pipelined {
		writes = "pipelined writes"
	}
	more := ""
	if v.crashes {
		more += ", writers crash"
	}
	if v.products {
		more += ", products change"
	}
	if v.jobCrashes {
		more += ", jobs crash"
	}
	if v.repartitioned {
		more += ", repartitioned"
	}
	return fmt.Sprintf("%s, %s, %s, %d streams%s", v.shape, scans, writes, v.streams, more)
}

// concurrentCases: orders stay in their rows or move, with daily_units in
// mode exact, bounded or fast.
var concurrentCases = []struct {
	name                 string
	moves, bounded, fast bool
}{
	{"in-place", false, false, false},
	{"in-place-bounded", false, true, false},
	{"moving", true, false, false},
	{"moving-bounded", true, true, false},
	{"moving-fast", true, false, true},
}

// concurrentHistory checks one history of TestConcurrentWriterAndRepair:
// the writer applies it to st while repairs run on job (st, or st read
// otherwise), and want gets the log in order without a job.
func concurrentHistory(t *testing.T, plan *schema.Plan, st, job, want store.Store, seed int64, moves bool, v variant) {
	ctx := context.Background()
	hist, first, rest := concurrentLog(seed, moves, v)
	apply(t, ctx, write.New(plan, st, write.Options{}), first)
	// Every run, whatever its shape, must have checked copies: a shape
	// whose parts checked nothing would pass the checks below vacuously.
	empty := 0
	var live int64 // live copies the runs found valid
	var crashed int
	runs, died := repairVariantWhile(t, ctx, plan, job, seed, v, func(rep *Report) {
		if rep.Kinds[KindIndex].Valid == 0 {
			empty++
		}
		live += rep.Kinds[KindLive].Valid
	}, func() { crashed = writeStreams(t, ctx, plan, st, seed, v, rest) })
	if runs+died == 0 {
		t.Fatal("no repair run ran while the writer ran")
	}
	t.Logf("%s: %d repair runs (and %d died), %d writers crashed, %d live copies found valid", v, runs, died, crashed, live)
	if v.products && live == 0 {
		t.Errorf("no repair run (%s) found a valid live copy", v)
	}
	if empty > 0 {
		t.Errorf("%d of %d repair runs (%s) found no valid index copy", empty, runs, v)
	}
	// What a quiet run after the writers may still repair; nothing else.
	quiet := map[string]bool{}
	if v.products && v.streams > 1 {
		// Two writers can cross a product's refresh with an order that
		// starts referencing it, leaving a stale live copy for the job to
		// rewrite (docs/writer.md, "Copied reference data").
		quiet[KindLive] = true
	}
	fast := plan.Table("daily_units").Counter.Mode == schema.CounterFast
	if fast {
		// A fast total is approximate until a quiet run sets it: a replay
		// can count an order twice or not at all, and a set beside a
		// writer can miss an increment that lands between the job's read
		// of the orders and its read of the total (docs/reconcile.md).
		quiet[KindCounter] = true
	}
	if v.repartitioned {
		// Two writers of one order leave what TestPartitionsAdded's
		// repairs remove: the first empties a row the order was left live
		// in, the second deletes its copies, both purging delete markers.
		// Whatever the job did beside the writers, these must then leave
		// the store as the log in order makes it.
		for range 2 {
			if rep := run(t, ctx, plan, st, Options{PurgeMarkers: true, WritersStopped: true}); rep.Failed() != 0 {
				t.Errorf("a repair after the writers (%s) failed:\n%s", v, text(rep))
			}
		}
	} else if len(quiet) > 0 {
		rep := run(t, ctx, plan, st, Options{WritersStopped: true})
		for kind, c := range rep.Kinds {
			if !quiet[kind] && c.Differences() > 0 {
				t.Errorf("the quiet run after the writers (%s) found %s differences:\n%s", v, kind, text(rep))
			}
		}
	}
	// The model is raw cells. Two writers of one order (repartitioned)
	// can leave a column of an older state below the newest state's
	// version, which readers and the job leave out (docs/writer.md, "The
	// primary row") and no repair deletes: the log applied alone (below)
	// is the measure then.
	if !plan.Table("daily_units").Counter.Bounded() && !fast && !v.products && !v.repartitioned {
		if d := testenv.DiffLines(visible(t, ctx, st, plan), expected(t, plan, hist)); d != "" {
			t.Errorf("after %d concurrent repair runs (%s) the store differs from the model:\n%s", runs, v, d)
		}
	}
	// Bounded totals, and the locator, as the log applied in order
	// without a repair leaves them.
	wantW := write.New(plan, want, write.Options{})
	apply(t, ctx, wantW, first)
	apply(t, ctx, wantW, rest)
	if fast {
		// The writer alone counts each order once, when first seen, as
		// it was then: the totals are the job's to set.
		run(t, ctx, plan, want, Options{WritersStopped: true})
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, st, plan), testenv.View(t, ctx, want, plan)); d != "" {
		t.Errorf("after %d concurrent repair runs (%s) the store differs from the log applied alone (- got, + want):\n%s", runs, v, d)
	}
	// Later than the last move by more than recentMove, so that no row is
	// left for a later run.
	later := func() int64 { return time.Now().Add(2 * recentMove).UnixMilli() }
	if rep := run(t, ctx, plan, st, Options{DryRun: true, Clock: later}); rep.Differences() != 0 {
		t.Errorf("differences at the end (%s):\n%s", v, text(rep))
	}
}

// concurrentLog is the log of a history of TestConcurrentWriterAndRepair:
// per order its events (hist), first each order's creation, then the rest
// of the orders' events and, with v.products, the products' events,
// interleaved; every event has its position in one log.
func concurrentLog(seed int64, moves bool, v variant) (hist [][]*event.Event, first, rest []*event.Event) {
	r := rand.New(rand.NewSource(seed))
	hist = orderHistories(r, 40, moves)
	for _, evs := range hist {
		first = append(first, evs[0])
	}
	rest = laterEvents(r, hist)
	if v.products {
		pr := rand.New(rand.NewSource(seed*7 + 3))
		rest = interleaved(pr, append([][]*event.Event{rest}, productHistories(pr)...))
	}
	logged(append(slices.Clone(first), rest...))
	return hist, first, rest
}

// repairVariantWhile is repairShapeWhile for variant v of a history: the
// job in v's shape, its runs dying when v says so.
func repairVariantWhile(t *testing.T, ctx context.Context, plan *schema.Plan, job store.Store, seed int64, v variant, seen func(*Report), writeAll func()) (runs, died int) {
	t.Helper()
	var crashJob *rand.Rand
	if v.jobCrashes {
		crashJob = rand.New(rand.NewSource(seed*13 + 5))
	}
	return repairShapeWhile(t, ctx, plan, job, v.shape, crashJob, seen, writeAll)
}

// writeStreams writes rest to st as variant v of a history says: in
// v.streams partitions at once, each with a writer of its own (as each
// member of a consumer group is a process of its own), which crashes
// once when v says so. It returns how many writers crashed.
func writeStreams(t *testing.T, ctx context.Context, plan *schema.Plan, st store.Store, seed int64, v variant, rest []*event.Event) int {
	var wg sync.WaitGroup
	var crashed atomic.Int32
	var streams [][]*event.Event
	if v.repartitioned {
		// The topic gets its second partition halfway: an order whose
		// key hashes to it has events in both, which two writers apply at
		// once (TestPartitionsAdded).
		two := repartition(rest, len(rest)/2, func(e *event.Event) string { return e.Entity + fmt.Sprint(e.Key) })
		streams = two[:]
	} else {
		streams = partitioned(rest, v.streams)
	}
	for i, evs := range streams {
		wr := rand.New(rand.NewSource(seed*31 + int64(i)))
		budget := -1
		if v.crashes {
			budget = wr.Intn(8 * len(evs))
		}
		wg.Go(func() {
			if writeStream(t, ctx, plan, st, wr, evs, v.pipelined, budget) {
				crashed.Add(1)
			}
		})
	}
	wg.Wait()
	return int(crashed.Load())
}

// partitioned splits evs into n streams by order key, as a producer keyed
// by entity spreads a log over partitions: an order's events keep their
// order within its stream. With n > 1, each stream's events are logged
// again at positions of their own stream.
func partitioned(evs []*event.Event, n int) [][]*event.Event {
	if n <= 1 {
		return [][]*event.Event{evs}
	}
	out := make([][]*event.Event, n)
	for _, e := range evs {
		p := rowkey.SaltBucket([]byte(e.Entity+fmt.Sprint(e.Key)), n)
		out[p] = append(out[p], e)
	}
	for p, evs := range out {
		for i, e := range evs {
			e.Stream, e.Offset = fmt.Sprintf("part-%d", p), int64(i)
		}
	}
	return out
}

// writeStream applies one stream's events to st: in batches of one to
// four, or pipelined, as denorm apply writes, each batch staged (its rows
// read) while the last one is written. With a budget of row writes >= 0
// the writer dies when it is used up, part of its way through a batch, and
// a new writer replays from the last batch committed. It may run on a
// goroutine of its own, so it reports failures with Error.
func writeStream(t *testing.T, ctx context.Context, plan *schema.Plan, st store.Store, r *rand.Rand, evs []*event.Event, pipelined bool, budget int) (crashed bool) {
	if len(evs) == 0 {
		return false
	}
	var lg *memlog.Log // the pipelined writers' log, which restarts resume
	if pipelined {
		lg = memlog.New(t, evs[0].Stream, evs[0].Offset, evs, r.Int63())
	}
	for restarts := 0; ; restarts++ {
		if restarts > 1 {
			t.Errorf("stream %s: a writer that cannot crash crashed", evs[0].Stream)
			return true
		}
		ws, _ := testenv.Crashing(st, budget, r)
		budget = -1 // the one crash is spent
		w := write.New(plan, ws, write.Options{})
		var err error
		if pipelined {
			dl := &memlog.DeadLetters{}
			lg.Restart()
			_, err = write.Run(ctx, w, lg, dl, write.RunOptions{BatchSize: 4})
			if len(dl.Recs) > 0 {
				t.Errorf("%d events went to the dead letter", len(dl.Recs))
			}
		} else {
			for len(evs) > 0 {
				n := min(len(evs), 1+r.Intn(4))
				var rej []write.Rejected
				if _, rej, err = w.Apply(ctx, evs[:n]); err != nil {
					break
				}
				if len(rej) > 0 {
					t.Errorf("apply: %d events refused", len(rej))
				}
				evs = evs[n:] // committed
			}
		}
		if err == nil {
			return restarts > 0
		}
		if !errors.Is(err, testenv.ErrCrashed) {
			t.Error(err)
			return restarts > 0
		}
	}
}
