package write

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store/pebble"
)

// growthWindow is how many events each reported stretch of the growth
// benchmark covers.
const growthWindow = 20000

// window is what the writer did over one stretch of events.
type window struct {
	events int
	took   time.Duration // in the writer's steps only
	units  int           // cells and delete markers written, increments
	fanout int           // of which refreshes of live copies
}

func (w window) String() string {
	s := w.took.Seconds()
	return fmt.Sprintf("%7.0f events/s %8.0f units/s (%8.0f without fan-out, fan-out %d units)",
		float64(w.events)/s, float64(w.units)/s, float64(w.units-w.fanout)/s, w.fanout)
}

func units(s Stats) int {
	n := s.Increments
	for _, v := range s.Cells {
		n += v
	}
	for _, v := range s.Deletes {
		n += v
	}
	return n
}

// BenchmarkGrowth applies one generated stream (gen.Orders as `denorm gen
// orders` makes it: 1% product renames, whose names orders copy live) to
// one store, in batches of 1,000, and reports the first and the last 20,000
// events: events/s and work units/s (cells and delete markers written,
// live-copy refreshes included), and the live-copy fan-out on its own.
// The first window is the median of five runs of it, the stream's own and
// four more on fresh stores: one run of it lasts a second or two.
// DENORM_GROWTH_EVENTS sets the stream's length (default 200,000, ten times
// the other benchmarks'); DENORM_GROWTH_PROFILE=prefix writes CPU profiles
// of the first and the last window to prefix-first.pprof and -last.pprof;
// DENORM_GROWTH_CACHE sets the store's block cache in bytes (default the
// store's own), to compare cache sizes; DENORM_GROWTH_MEMTABLE the
// memtable's (the store's default cache grows with it: set both to compare
// memtables alone).
// The writer applies the stream as Run does on a log that reads ahead
// (each batch staged while the one before it is written); only its steps
// are timed: decoding the JSON lines is not the writer's work.
// Run it once: -benchtime 1x.
func BenchmarkGrowth(b *testing.B) {
	n := 200000
	if s := os.Getenv("DENORM_GROWTH_EVENTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 2*growthWindow {
			b.Fatalf("DENORM_GROWTH_EVENTS=%q: want a number of at least %d", s, 2*growthWindow)
		}
	}
	prof := os.Getenv("DENORM_GROWTH_PROFILE")
	path := filepath.Join(b.TempDir(), "events.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.Orders(f, gen.OrdersOptions{Events: n, Seed: 1, Renames: 0.01}); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	plan := ordersPlan(b)
	for b.Loop() {
		b.StopTimer()
		wins := applyGrowth(b, plan, path, 0, prof, n)
		if len(wins) < 2 {
			b.Fatalf("%d windows", len(wins))
		}
		// The first window lasts a second or two, and its rate moves by a
		// fifth from one run to the next on a quiet machine: it is taken
		// again on fresh stores, and the median of the runs reported.
		firsts := []window{wins[0]}
		for range growthFirstRuns - 1 {
			w := applyGrowth(b, plan, path, growthWindow, "", n)[0]
			b.Logf("first window again: %v", w)
			firsts = append(firsts, w)
		}
		slices.SortFunc(firsts, func(x, y window) int { return cmp.Compare(x.unitRate(), y.unitRate()) })
		first, last := firsts[len(firsts)/2], wins[len(wins)-1]
		// The last full window: a short tail would be a noisy figure.
		if last.events < growthWindow {
			last = wins[len(wins)-2]
		}
		fs, ls := first.took.Seconds(), last.took.Seconds()
		b.ReportMetric(float64(first.events)/fs, "first-events/s")
		b.ReportMetric(float64(last.events)/ls, "last-events/s")
		b.ReportMetric(float64(first.units)/fs, "first-units/s")
		b.ReportMetric(float64(last.units)/ls, "last-units/s")
		b.ReportMetric(float64(first.fanout)/fs, "first-fanout/s")
		b.ReportMetric(float64(last.fanout)/ls, "last-fanout/s")
		b.ReportMetric((float64(last.units)/ls)/(float64(first.units)/fs), "last/first-units")
		b.ReportMetric(float64(sumEvents(wins)), "events")
		b.ReportMetric(0, "ns/op")
		b.StartTimer()
	}
}

// growthFirstRuns is how many times the first window is measured.
const growthFirstRuns = 5

func (w window) unitRate() float64 { return float64(w.units) / w.took.Seconds() }

func sumEvents(ws []window) int {
	n := 0
	for _, w := range ws {
		n += w.events
	}
	return n
}

// applyGrowth applies the stream at path to a fresh store, in batches of
// 1,000, the first limit events of it (0: all), and returns its windows.
// With prof set it profiles the first window and the one that starts
// within the last window's length of n.
func applyGrowth(b *testing.B, plan *schema.Plan, path string, limit int, prof string, n int) []window {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "store")
	st := openGrowth(b, dir)
	defer st.Close()
	w := New(plan, st, Options{})
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	var wins []window
	cur := window{}
	var total int // events read
	var applied int
	profiling := false
	var pf *os.File // the profile being written
	stopProfile := func() {
		pprof.StopCPUProfile()
		if err := pf.Close(); err != nil {
			b.Fatal(err)
		}
		profiling = false
	}
	get := func(int) []*event.Event {
		var evs []*event.Event
		for len(evs) < 1000 && (limit == 0 || total < limit) && sc.Scan() {
			ev, err := event.Decode(plan, sc.Bytes())
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, ev)
			total++
		}
		return evs
	}
	step := func(fn func()) {
		// The first window, and the one that starts within the last
		// 20,000 lines generated (the stream holds a few more events
		// than asked for: renames come on top).
		if prof != "" && !profiling && (applied == 0 || applied >= n-growthWindow && cur.events == 0) {
			name := prof + "-first.pprof"
			if applied > 0 {
				name = prof + "-last.pprof"
			}
			var err error
			if pf, err = os.Create(name); err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(pf); err != nil {
				b.Fatal(err)
			}
			profiling = true
		}
		b.StartTimer()
		start := time.Now()
		fn()
		cur.took += time.Since(start)
		b.StopTimer()
	}
	// A step writes batch k and stages batch k+1: its time goes to the
	// window of batch k.
	done := func(_ int, stats Stats) {
		cur.events += stats.Events
		cur.units += units(stats)
		cur.fanout += stats.Fanout
		applied += stats.Events
		if cur.events >= growthWindow {
			if profiling {
				stopProfile()
			}
			wins = append(wins, cur)
			if limit == 0 {
				b.Logf("events %8d: %v", applied, cur) // as each window ends, with -v
			}
			cur = window{}
		}
	}
	if err := pipelined(ctx, w, get, step, done); err != nil {
		b.Fatal(err)
	}
	if profiling {
		stopProfile()
	}
	if cur.events > 0 {
		wins = append(wins, cur)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if limit == 0 {
		fmt.Fprintf(os.Stderr, "Pebble at the end:\n%s\n", st.LSM())
	}
	return wins
}

func openGrowth(b *testing.B, dir string) *pebble.Store {
	opts := pebble.Options{Durability: benchDurability}
	if s := os.Getenv("DENORM_GROWTH_CACHE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		opts.CacheSize = n
	}
	if s := os.Getenv("DENORM_GROWTH_MEMTABLE"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		opts.MemTableSize = n
	}
	st, err := pebble.Open(context.Background(), dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ddl.Create(context.Background(), st, ordersPlan(b)); err != nil {
		b.Fatal(err)
	}
	return st
}
