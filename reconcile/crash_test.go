package reconcile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

var (
	crashHistories = flag.Int("crash-histories", 60, "histories TestRepairBeforeReplay runs for each schema")
	crashFrom      = flag.Int("crash-from", 0, "the first history TestRepairBeforeReplay runs (to rerun one that failed)")
)

// TestRepairBeforeReplay runs the job where a schedule puts it sooner or
// later: while a writer that died in the middle of a batch has not come
// back yet. Its store then holds a batch in part: a primary row without its
// copies, copies of a state whose primary row was never written, an entity
// moved into its new row and still live in the old one, a Counted record
// ahead of the totals. The repair must take none of that for a difference
// it may undo in a way the replay cannot mend (a delete marker over a copy
// the replay writes again at the same version, a total that counts the
// batch twice), and the restarted writer, replaying the log from the batch
// it died in, must leave the store as the log applied without a crash,
// with nothing left for a dry run to find.
//
// Each history runs the job one of the three ways (in one process, in
// parts, as shards), with or without purging delete markers, and arrives
// in log order or shuffled with duplicates. In some the job dies as well,
// in the middle of its repairs, and runs again; in some the restarted
// writer dies once more before the end of the log.
func TestRepairBeforeReplay(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets := readFile(t, "../write/testdata/tickets.yaml")
	n := *crashHistories
	if raceEnabled {
		n = min(n, 6)
	}
	for _, src := range []struct{ name, text string }{
		{"device_events.yaml", string(readFile(t, "../examples/device_events.yaml"))},
		{"tickets.yaml", string(tickets)},
		{"tickets_bounded.yaml", strings.ReplaceAll(string(tickets), "mode: exact", "mode: bounded")},
		{"orders.yaml", string(readFile(t, "../examples/orders.yaml"))},
	} {
		p, err := schema.Parse(src.name, []byte(src.text))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(src.name, func(t *testing.T) {
			found := 0
			for h := *crashFrom; h < *crashFrom+n; h++ {
				if crashRepairHistory(t, p, int64(20261207+h), now, crashOptions{shuffle: h%2 == 1, purge: h%4 >= 2}) {
					found++
				}
			}
			// Else no crash left the job anything to see.
			if n >= 60 && found < n/10 {
				t.Errorf("the job found differences after %d of %d crashes", found, n)
			}
		})
	}
}

// crashOptions are how crashRepairHistory runs a history.
type crashOptions struct {
	shuffle bool // the log arrives shuffled, with duplicates
	purge   bool // the job purges delete markers
	// wall: every clock is the wall clock (HBase's runs), so no version
	// comes near a TTL.
	wall bool
	// hb: the store that crashes is on the test HBase (and wall is taken
	// as set). The store it is compared with is embedded.
	hb bool
}

// crashRepairHistory checks one history of TestRepairBeforeReplay; it
// reports whether the job found differences after the crash.
func crashRepairHistory(t *testing.T, p *schema.Plan, seed, now int64, o crashOptions) bool {
	ctx := context.Background()
	clock := func() int64 { return now }
	o.wall = o.wall || o.hb
	if o.wall {
		clock = func() int64 { return time.Now().UnixMilli() }
	}
	purge := o.purge
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, p, testenv.HistoryOptions{Entities: 1 + r.Intn(4), Now: now, WallClock: o.wall}), testenv.EntityOf(p))
	how := "in log order"
	if o.shuffle {
		evs, how = shuffledLog(r, evs), "shuffled"
	} else {
		evs = streamed(evs)
	}
	var ends []int // the batches, as consumed from the log
	for off := 0; off < len(evs); {
		off = min(off+1+r.Intn(6), len(evs))
		ends = append(ends, off)
	}
	stores := &historyStores{t: t, clock: clock}
	defer stores.close()
	want := stores.create(p)
	wc, counted := testenv.Crashing(want, -1, nil)
	w := write.New(p, wc, write.Options{Clock: clock})
	for b := range ends {
		apply(t, ctx, w, evs[start(ends, b):ends[b]])
	}
	if counted.Writes() == 0 {
		return false
	}

	var got store.Store
	if o.hb {
		got = testenv.OpenHBase(t, "cr")
		if _, err := ddl.Create(ctx, got, p); err != nil {
			t.Fatal(err)
		}
	} else {
		got = stores.create(p)
	}
	// writeFrom runs a writer process from batch from, until it dies after
	// budget row writes; it returns the batch it died in, or -1 when it
	// got to the end of the log.
	writeFrom := func(from, budget int) int {
		gc, _ := testenv.Crashing(got, budget, r)
		w := write.New(p, gc, write.Options{Clock: clock})
		for b := from; b < len(ends); b++ {
			_, rej, err := w.Apply(ctx, evs[start(ends, b):ends[b]])
			if errors.Is(err, testenv.ErrCrashed) {
				return b
			}
			if err != nil || len(rej) > 0 {
				t.Fatalf("seed %d: apply of batch %d: %v, refused %v", seed, b, err, rej)
			}
		}
		return -1
	}
	way := splitWays[seed%int64(len(splitWays))]
	var story []string // what happened, for a failure message
	what := func() string {
		return fmt.Sprintf("%s, %d events in %d batches, the job %s (purging markers: %v): %s", how, len(evs), len(ends), way.name, purge, strings.Join(story, ", "))
	}
	// The restarted writer resumes at the batch it died in: its position
	// in the log was never committed. In half the histories it dies once
	// more before the end, and the job runs again before the next start.
	died := writeFrom(0, r.Intn(counted.Writes()))
	if died < 0 {
		t.Fatalf("seed %d: no crash within %d row writes", seed, counted.Writes())
	}
	var dry *Report
	for crashes := 1 + r.Intn(2); died >= 0; crashes-- {
		story = append(story, fmt.Sprintf("the writer dead in batch %d", died))
		d := way.run(t, ctx, p, got, Options{DryRun: true, Clock: clock})
		if dry == nil {
			dry = d
		}
		// In a third of the histories the job dies too, in the middle of
		// its repairs, and is started again.
		if d.Differences() > 0 && r.Intn(3) == 0 {
			jc, js := testenv.Crashing(got, r.Intn(int(d.Differences())), r)
			if _, err := Run(ctx, p, jc, Options{PurgeMarkers: purge, Clock: clock}); err != nil && !errors.Is(err, testenv.ErrCrashed) {
				t.Fatalf("seed %d: the job that dies: %v", seed, err)
			}
			story = append(story, fmt.Sprintf("the job dead after %d row writes", js.Writes()))
		}
		rep := way.run(t, ctx, p, got, Options{PurgeMarkers: purge, Clock: clock})
		story = append(story, fmt.Sprintf("the job found %s", findings(d)))
		if rep.Failed() != 0 {
			t.Fatalf("seed %d, %s: the repair failed:\n%s", seed, what(), reportText(t, rep))
		}
		budget := -1
		if crashes > 1 {
			budget = r.Intn(counted.Writes())
		}
		died = writeFrom(died, budget)
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, got, p), testenv.View(t, ctx, want, p)); d != "" {
		t.Fatalf("seed %d, %s, then the log replayed from that batch; the store differs from the log applied without a crash (- got, + want):\n%s", seed, what(), d)
	}
	if rep := run(t, ctx, p, got, Options{DryRun: true, Clock: clock}); rep.Differences() != 0 {
		t.Fatalf("seed %d, %s, then the log replayed; differences:\n%s", seed, what(), reportText(t, rep))
	}
	return dry.Differences() > 0
}

// start is where batch b of a log cut at ends begins.
func start(ends []int, b int) int {
	if b == 0 {
		return 0
	}
	return ends[b-1]
}

// streamed is evs at rising offsets of one stream, as read from a log.
func streamed(evs []*event.Event) []*event.Event {
	out := make([]*event.Event, len(evs))
	for i, e := range evs {
		c := *e
		c.Stream, c.Offset = "log", int64(i)*10
		out[i] = &c
	}
	return out
}
