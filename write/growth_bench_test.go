package write

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"testing"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
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
	// With DENORM_GROWTH_RAW: raw Pebble writing the same cells into a
	// store of its own, which grows as the writer's does.
	rawCells int
	rawTook  time.Duration
}

func (w window) String() string {
	s := w.took.Seconds()
	out := fmt.Sprintf("%7.0f events/s %8.0f units/s (%8.0f without fan-out, fan-out %d units)",
		float64(w.events)/s, float64(w.units)/s, float64(w.units-w.fanout)/s, w.fanout)
	if w.rawTook > 0 {
		out += fmt.Sprintf(", raw Pebble %8.0f cells/s", w.rawRate())
	}
	return out
}

func (w window) rawRate() float64 { return float64(w.rawCells) / w.rawTook.Seconds() }

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
// memtables alone). DENORM_GROWTH_RAW=1 also writes every step's cells,
// after the step and timed on their own, into a raw Pebble database that
// grows as the writer's store does, a key per version as
// BenchmarkApplyPaired's raw side keys them; DENORM_GROWTH_RAW=merge keys
// them as a store would whose one-version columns are one key each, the
// newest version kept by a merge. Raw Pebble's LSM is printed at the end,
// to compare what its flushes and compactions wrote under either layout.
// Its windows' cells/s count its commits only: the compactions they cause
// run in the background, and slow the writer's windows instead.
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
	raw := os.Getenv("DENORM_GROWTH_RAW")
	if raw != "" && raw != "1" && raw != "merge" {
		b.Fatalf("DENORM_GROWTH_RAW=%q: want 1 or merge", raw)
	}
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
		wins := applyGrowth(b, plan, path, 0, prof, n, raw)
		if len(wins) < 2 {
			b.Fatalf("%d windows", len(wins))
		}
		// The first window lasts a second or two, and its rate moves by a
		// fifth from one run to the next on a quiet machine: it is taken
		// again on fresh stores, and the median of the runs reported.
		firsts := []window{wins[0]}
		for range growthFirstRuns - 1 {
			w := applyGrowth(b, plan, path, growthWindow, "", n, raw)[0]
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
		if raw != "" {
			// The raw side's own median first window: its runs do not
			// sort as the writer's do.
			slices.SortFunc(firsts, func(x, y window) int { return cmp.Compare(x.rawRate(), y.rawRate()) })
			rf := firsts[len(firsts)/2].rawRate()
			b.ReportMetric(rf, "raw-first-cells/s")
			b.ReportMetric(last.rawRate(), "raw-last-cells/s")
			b.ReportMetric(last.rawRate()/rf, "raw-last/first")
		}
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
// within the last window's length of n. With raw set it writes each
// step's cells into a raw Pebble database too (window.rawCells).
func applyGrowth(b *testing.B, plan *schema.Plan, path string, limit int, prof string, n int, raw string) []window {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "store")
	st := openGrowth(b, dir)
	defer st.Close()
	var target store.Store = st
	var rec *logStore
	var rawDB *pdb.DB
	if raw != "" {
		rec = &logStore{Store: st, log: &cellLog{}}
		target = rec
		var err error
		o := &pdb.Options{MemTableSize: pebble.DefaultMemTableSize, Logger: quietPebble{pdb.DefaultLogger}}
		if raw == "merge" {
			o.Merger = newestMerger
		}
		if rawDB, err = pdb.Open(filepath.Join(b.TempDir(), "raw"), o); err != nil {
			b.Fatal(err)
		}
		defer rawDB.Close()
	}
	w := New(plan, target, Options{})
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
		if rec != nil {
			// The step's cells, written raw with the store's durability
			// (benchDurability, the log not synced), then forgotten.
			start := time.Now()
			commit := rec.log.commitWith
			if raw == "merge" {
				commit = rec.log.mergeWith
			}
			if err := commit(rawDB, 0, rec.log.cells(), pdb.NoSync); err != nil {
				b.Fatal(err)
			}
			cur.rawTook += time.Since(start)
			cur.rawCells += rec.log.cells()
			rec.log.reset()
		}
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
		if rawDB != nil {
			fmt.Fprintf(os.Stderr, "Raw Pebble (%s) at the end:\n%s\n", raw, rawDB.Metrics())
		}
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

// mergeWith is commitWith for a database keyed as a store would be whose
// one-version columns are one Pebble key each: a put's key leaves out its
// timestamp, which leads the value, and is a merge that newestMerger
// settles, so that compactions drop every version but the newest. Delete
// markers stay keys of their own, timestamp included.
func (l *cellLog) mergeWith(db *pdb.DB, from, to int, wo *pdb.WriteOptions) error {
	batch := db.NewBatch()
	defer batch.Close()
	var v8 []byte
	for c := from; c < to; c++ {
		k, v := l.cell(c)
		if k[len(k)-9] != byte(store.Put) {
			if err := batch.Set(k, v, nil); err != nil {
				return err
			}
			continue
		}
		v8 = append(append(v8[:0], k[len(k)-8:]...), v...)
		if err := batch.Merge(k[:len(k)-8], v8, nil); err != nil {
			return err
		}
	}
	return batch.Commit(wo)
}

// newestMerger keeps the operand with the highest timestamp (its first 8
// bytes, big-endian); of equal ones, the newer write.
var newestMerger = &pdb.Merger{
	Name: "denorm.bench.newest",
	Merge: func(_, value []byte) (pdb.ValueMerger, error) {
		return &newest{v: append([]byte(nil), value...)}, nil
	},
}

type newest struct{ v []byte }

func (n *newest) MergeNewer(value []byte) error {
	if bytes.Compare(value[:8], n.v[:8]) >= 0 {
		n.v = append(n.v[:0], value...)
	}
	return nil
}

func (n *newest) MergeOlder(value []byte) error {
	if bytes.Compare(value[:8], n.v[:8]) > 0 {
		n.v = append(n.v[:0], value...)
	}
	return nil
}

func (n *newest) Finish(bool) ([]byte, io.Closer, error) { return n.v, nil, nil }
