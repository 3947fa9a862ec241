package reconcile

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand"
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
	n := 60
	if raceEnabled {
		n = 6
	}
	split, differed := 0, 0
	for h := range n {
		st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: func() int64 { return now }, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		s, d := partitionsHistory(t, plan, st, int64(20261207+h), now)
		st.Close()
		if s {
			split++
		}
		if d {
			differed++
		}
	}
	if split < n/2 {
		t.Errorf("only %d of %d histories gave the new partition events", split, n)
	}
	t.Logf("%d of %d histories split an entity's events over two partitions; %d left differences for the repair", split, n, differed)
}

// partitionsHistory checks one history of TestPartitionsAdded, the two
// writers writing to got; it reports whether the history gave the new
// partition events and whether the writers left differences.
func partitionsHistory(t *testing.T, plan *schema.Plan, got store.Store, seed, now int64) (split, differed bool) {
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
	differed = run(t, ctx, plan, got, Options{DryRun: true}).Differences() > 0
	// The first repair empties a primary row the entity was left live in
	// (locator.go); the second deletes that row's copies.
	for range 2 {
		if rep := run(t, ctx, plan, got, Options{}); rep.Failed() != 0 {
			t.Fatalf("seed %d: the repair failed:\n%s", seed, reportText(t, rep))
		}
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, got, plan), testenv.View(t, ctx, want, plan)); d != "" {
		t.Fatalf("seed %d: two partitions applied at once, then two repairs; the store differs from the log in order (- got, + want):\n%s", seed, d)
	}
	if rep := run(t, ctx, plan, got, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("seed %d: differences after the repair:\n%s", seed, reportText(t, rep))
	}
	return len(streams[1]) > 0, differed
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
