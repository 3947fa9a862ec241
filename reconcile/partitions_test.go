package reconcile

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

var (
	partitionsHistories = flag.Int("partitions-histories", 60, "histories TestPartitionsAdded runs")
	partitionsFrom      = flag.Int("partitions-from", 0, "the first history TestPartitionsAdded runs (to rerun one that failed)")
)

// TestPartitionsAdded breaks the writer's assumption that an entity's
// events come from one log stream at a time (docs/writer.md, A3), the way a
// team breaks it: partitions added to the keyed topic. From the change on,
// an entity's events go to the partition its key now hashes to, while the
// old partition may still hold its earlier events, and two writers (one a
// partition) apply both at once. Two writers deriving from one state
// each delete only the copies of the state they read, so a copy of the
// state the other wrote can stay behind, and a bounded counter may count
// the entity in both streams. Where the entity moved (a change of a primary
// key field), each writer can move it from the row it read and leave it
// live in two rows. Two repairs must leave the store as the log applied in
// order does.
func TestPartitionsAdded(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UnixMilli()
	plan, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := *partitionsHistories
	if raceEnabled {
		n = min(n, 6)
	}
	split := 0
	var differed [2]int // at once, scheduled
	for h := *partitionsFrom; h < *partitionsFrom+n; h++ {
		st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: func() int64 { return now }, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		// Every other history runs the writers in a seeded schedule.
		s, d := partitionsHistory(t, plan, st, int64(20261207+h), now, h%2 == 1)
		st.Close()
		if s {
			split++
		}
		if d {
			differed[h%2]++
		}
	}
	if split < n/2 {
		t.Errorf("only %d of %d histories gave the new partition events", split, n)
	}
	// The schedule holds one writer at its first write while the other
	// writes, in half its turns: it must leave the repairs something.
	if n >= 60 && differed[1] < n/20 {
		t.Errorf("the scheduled writers left differences in %d of %d histories", differed[1], n/2)
	}
	t.Logf("%d of %d histories split an entity's events over two partitions; %d at once and %d scheduled left differences for the repair", split, n, differed[0], differed[1])
}

// partitionsHistory checks one history of TestPartitionsAdded, the two
// writers writing to got at once, or if scheduled in the turns a seeded
// schedule gives them (applyScheduled); it reports whether the history
// gave the new partition events and whether the writers left differences.
func partitionsHistory(t *testing.T, plan *schema.Plan, got store.Store, seed, now int64, scheduled bool) (split, differed bool) {
	ctx := context.Background()
	clock := func() int64 { return now }
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, plan, testenv.HistoryOptions{Entities: 2 + r.Intn(4), Now: now}), testenv.EntityOf(plan))
	streams := repartition(evs, r.Intn(len(evs)+1), testenv.EntityOf(plan))
	want, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: clock, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	for _, st := range []store.Store{want, got} {
		if _, err := ddl.Create(ctx, st, plan); err != nil {
			t.Fatal(err)
		}
	}
	apply(t, ctx, write.New(plan, want, write.Options{Clock: clock}), evs)

	if scheduled {
		applyScheduled(t, ctx, plan, got, clock, r, streams)
	} else {
		var wg sync.WaitGroup
		for _, s := range streams {
			w := write.New(plan, got, write.Options{Clock: clock})
			b := rand.New(rand.NewSource(seed + int64(len(s))))
			wg.Go(func() {
				for off := 0; off < len(s); {
					end := min(off+1+b.Intn(4), len(s))
					apply(t, ctx, w, s[off:end])
					off = end
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	differed = run(t, ctx, plan, got, Options{DryRun: true, WritersStopped: true}).Differences() > 0
	// The first repair empties a primary row the entity was left live in
	// (locator.go); the second deletes that row's copies. Both purge
	// markers: one writer's delete of a copy it derived no more (at its
	// version - 1) can mask the same copy the other wrote at a version
	// below it, which only a repair after a purge brings back.
	for range 2 {
		if rep := run(t, ctx, plan, got, Options{PurgeMarkers: true, WritersStopped: true}); rep.Failed() != 0 {
			t.Fatalf("seed %d: the repair failed:\n%s", seed, reportText(t, rep))
		}
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, got, plan), testenv.View(t, ctx, want, plan)); d != "" {
		t.Fatalf("seed %d: two partitions applied at once, then two repairs; the store differs from the log in order (- got, + want):\n%s", seed, d)
	}
	if rep := run(t, ctx, plan, got, Options{DryRun: true, WritersStopped: true}); rep.Differences() != 0 {
		t.Fatalf("seed %d: differences after the repair:\n%s", seed, reportText(t, rep))
	}
	return len(streams[1]) > 0, differed
}

// applyScheduled applies the two streams, each cut into batches, by two
// writers in turns a seeded schedule picks: a writer's batch alone, or
// held at its first write (its reads done) while the other writer's next
// batch runs to its end, then let go. The second is the lost update two
// partitions of one entity make; the schedule makes it reproducible, where
// goroutines make it when the scheduler happens to.
func applyScheduled(t *testing.T, ctx context.Context, plan *schema.Plan, got store.Store, clock func() int64, r *rand.Rand, streams [2][]*event.Event) {
	var batches [2][][]*event.Event
	var ws [2]*write.Writer
	var gates [2]*testenv.GateStore
	for i, s := range streams {
		for off := 0; off < len(s); {
			end := min(off+1+r.Intn(4), len(s))
			batches[i] = append(batches[i], s[off:end])
			off = end
		}
		var gs store.Store
		gs, gates[i] = testenv.Gate(got)
		ws[i] = write.New(plan, gs, write.Options{Clock: clock})
	}
	var next [2]int
	for next[0] < len(batches[0]) || next[1] < len(batches[1]) {
		a := r.Intn(2)
		if next[a] == len(batches[a]) {
			a = 1 - a
		}
		o := 1 - a
		if next[o] == len(batches[o]) || r.Intn(2) == 0 {
			apply(t, ctx, ws[a], batches[a][next[a]])
			next[a]++
			continue
		}
		// A batch that writes nothing is not held: it is done before
		// the other runs.
		_, let := hold(t, ctx, ws[a], gates[a], 1, batches[a][next[a]])
		apply(t, ctx, ws[o], batches[o][next[o]])
		let()
		next[a]++
		next[o]++
	}
}

// repartition gives the events log positions as a topic of one partition
// that gets a second at event cut: events before it are in partition 0,
// events after it in the partition their entity's key hashes to.
func repartition(evs []*event.Event, cut int, entityOf func(*event.Event) string) [2][]*event.Event {
	var out [2][]*event.Event
	for i, e := range evs {
		p := 0
		if i >= cut {
			h := fnv.New32a()
			h.Write([]byte(entityOf(e)))
			p = int(h.Sum32() % 2)
		}
		e.Stream, e.Offset = fmt.Sprintf("orders-%d", p), int64(len(out[p]))
		out[p] = append(out[p], e)
	}
	return out
}

// TestDeleteBeforeTheOtherWriterWrote replays two histories of
// TestPartitionsAdded that left an order live after its delete. In both
// the old partition's writer reads the order's empty locator row and is
// held at its first write, and writes the order's first state in a row
// only after the new partition's writer deleted the order:
//
//   - moved, then deleted (seed 20261420, scheduled): the new writer moved
//     the order into a row of its own, and deletes it there, never knowing
//     the old writer's row;
//   - deleted only (seed 20262298, scheduled): the new writer's batch moves
//     the order in and deletes it, which folds to a delete of an entity no
//     row holds, recorded in the locator row alone.
//
// The old writer then skips the order's later events (a delete, a move) as
// older than that delete, so nothing empties the row it wrote, and the
// bounded daily_units keeps counting the order's item. The job must take
// the row as left behind by the delete, and the store end as the log in
// order leaves it, totals included.
func TestDeleteBeforeTheOtherWriterWrote(t *testing.T) {
	ctx := context.Background()
	plan, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).UnixMilli()
	clock := func() int64 { return now }
	order := func(v int64, customer string, placed int64, stream string, offset int64) *event.Event {
		return orderEvent(t, plan, fmt.Sprintf(`"version":%d,"state":{"orderId":"o1","customerId":%q,"status":"OPEN","placedAt":%d,"totalCents":5,"items":[{"line":1,"sku":"s1","quantity":3,"name":"n","priceCents":5}]}`, v, customer, placed), stream, offset)
	}
	del := func(v int64, stream string, offset int64) *event.Event {
		return orderEvent(t, plan, fmt.Sprintf(`"op":"delete","version":%d`, v), stream, offset)
	}
	p1, p2 := now-5000, now-4000
	old := []*event.Event{order(1, "c3", p1, "orders-0", 0), del(2, "orders-0", 1), order(3, "c1", p2, "orders-0", 2)}
	moved := []*event.Event{order(4, "c3", p2, "orders-1", 0), del(5, "orders-1", 1)}
	for _, c := range []struct {
		name string
		// split: the new writer's move and delete are two batches, the
		// old writer held while the first runs, the new one held at the
		// second's first write while the old one writes.
		split bool
	}{{"moved, then deleted", true}, {"deleted only", false}} {
		t.Run(c.name, func(t *testing.T) {
			stores := &historyStores{t: t, clock: clock}
			defer stores.close()
			want := stores.create(plan)
			apply(t, ctx, write.New(plan, want, write.Options{Clock: clock}), append(slices.Clone(old), moved...))

			got := stores.create(plan)
			gsOld, gateOld := testenv.Gate(got)
			gsNew, gateNew := testenv.Gate(got)
			wOld := write.New(plan, gsOld, write.Options{Clock: clock})
			wNew := write.New(plan, gsNew, write.Options{Clock: clock})
			letOld := holdAt(t, ctx, wOld, gateOld, 1, old[:1])
			if c.split {
				apply(t, ctx, wNew, moved[:1])
				letNew := holdAt(t, ctx, wNew, gateNew, 1, moved[1:])
				letOld()
				letNew()
			} else {
				apply(t, ctx, wNew, moved)
				letOld()
			}
			apply(t, ctx, wOld, old[1:])
			repairLeftBehind(t, ctx, plan, got, want, Options{Clock: clock})
		})
	}
}

// TestMovedFromARowNotYetWritten is the history of TestPartitionsAdded
// that left an order live in a row its locator did not list (seed 20261881,
// at once): the old partition's writer lists the order's row and is held
// before it writes the row; the new partition's writer reads the listing,
// moves the order from that row (empty yet: it only unlists it) to a row
// of its own; the first writer then writes the row it listed. The order is
// live in two rows, one unlisted, which the locator check took for a row a
// writer was moving (a newer cell in the locator row) and left alone.
func TestMovedFromARowNotYetWritten(t *testing.T) {
	ctx := context.Background()
	plan, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).UnixMilli()
	clock := func() int64 { return now }
	order := func(v int64, customer, stream string) *event.Event {
		return orderEvent(t, plan, fmt.Sprintf(`"version":%d,"state":{"orderId":"o1","customerId":%q,"status":"OPEN","placedAt":%d,"totalCents":5,"items":[]}`, v, customer, now-5000), stream, 0)
	}
	first, moved := order(1, "c3", "orders-0"), order(2, "c2", "orders-1")
	stores := &historyStores{t: t, clock: clock}
	defer stores.close()
	want := stores.create(plan)
	apply(t, ctx, write.New(plan, want, write.Options{Clock: clock}), []*event.Event{first, moved})

	got := stores.create(plan)
	gs, gate := testenv.Gate(got)
	// Its locator row passes, its primary row waits.
	let := holdAt(t, ctx, write.New(plan, gs, write.Options{Clock: clock}), gate, 2, []*event.Event{first})
	apply(t, ctx, write.New(plan, got, write.Options{Clock: clock}), []*event.Event{moved})
	let()
	repairLeftBehind(t, ctx, plan, got, want, Options{PurgeMarkers: true, Clock: clock})
}

// orderEvent decodes an event of order o1 of the orders example from the
// fields after its key, at a position of stream.
func orderEvent(t *testing.T, plan *schema.Plan, fields, stream string, offset int64) *event.Event {
	t.Helper()
	e, err := event.Decode(plan, []byte(`{"entity":"order","key":{"orderId":"o1"},`+fields+`}`))
	if err != nil {
		t.Fatal(err)
	}
	e.Stream, e.Offset = stream, offset
	return e
}

// hold starts w on evs, and returns once gate holds it at its n-th write
// call (held) or w is done with fewer; let lets it go, waits for it, and
// fails the test if the apply failed or refused an event.
func hold(t *testing.T, ctx context.Context, w *write.Writer, gate *testenv.GateStore, n int, evs []*event.Event) (held bool, let func()) {
	t.Helper()
	gate.ArmAt(n)
	finished := make(chan struct{})
	var rej []write.Rejected
	var err error
	go func() {
		defer close(finished)
		_, rej, err = w.Apply(ctx, evs)
	}()
	held = gate.Held(finished)
	return held, func() {
		t.Helper()
		gate.Release()
		<-finished
		if err != nil || len(rej) > 0 {
			t.Fatalf("the held writer's apply: %v, refused %v", err, rej)
		}
	}
}

// holdAt is hold that requires w to be held.
func holdAt(t *testing.T, ctx context.Context, w *write.Writer, gate *testenv.GateStore, n int, evs []*event.Event) func() {
	t.Helper()
	held, let := hold(t, ctx, w, gate, n, evs)
	if !held {
		let()
		t.Fatalf("the held writer made fewer than %d write calls", n)
	}
	return let
}

// repairLeftBehind requires a dry run of got to find one primary row left
// behind (locator stale), two repairs with opts to succeed, and got then
// to read as want.
func repairLeftBehind(t *testing.T, ctx context.Context, plan *schema.Plan, got, want store.Store, opts Options) {
	t.Helper()
	// Both writers are done: rows of orders moved a moment ago are
	// repaired now.
	opts.WritersStopped = true
	dry := run(t, ctx, plan, got, Options{DryRun: true, Clock: opts.Clock, WritersStopped: true})
	if c := dry.kind(KindLocator); c.Stale != 1 {
		t.Fatalf("a dry run found %s, want the row left behind (locator stale 1)", findings(dry))
	}
	for range 2 {
		if rep := run(t, ctx, plan, got, opts); rep.Failed() != 0 {
			t.Fatalf("the repair failed:\n%s", reportText(t, rep))
		}
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, got, plan), testenv.View(t, ctx, want, plan)); d != "" {
		t.Fatalf("repaired twice, the store differs from the log in order (- got, + want):\n%s", d)
	}
}
