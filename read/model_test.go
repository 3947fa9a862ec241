package read

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
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

var readHistories = flag.Int("read-histories", 60, "histories TestReadRepairConverges runs for each schema")

// ticketQueries are queries over every kind of table of the tickets test
// schema, which declares none: a thin index on a salted key, an index per
// child element with covering fields, a partial covering index, counters.
const ticketQueries = `
queries:
  by_assignee:
    table: tickets_by_assignee
    by: [assignee]
    limit: 100
  by_tag:
    table: tickets_by_tag
    by: [tags.tag]
    limit: 100
  urgent:
    table: urgent_tickets
    by: [tenant]
    limit: 100
  counts:
    table: daily_counts
    by: [tenant, queue, openedAt]
  weights:
    table: tag_weights
    by: [tags.tag]
`

// TestReadRepairConverges holds readers to what the guide promises of
// them while writers apply a log in any order: a read that verifies thin
// index hits and repairs the stale ones returns what the same read of a
// store without reads returns, and its repairs never change what the log
// makes of the store. Each history's log is applied batch by batch to two
// stores; after random batches every query runs for every value the log
// gives it, with Repair on one store and without on the other. The log
// arrives in order, shuffled with duplicates, or in order with the writer
// of the store that is read dying in the middle of half the batches, read
// with repairs while it is down, and replaying from that batch.
func TestReadRepairConverges(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets, err := os.ReadFile("../write/testdata/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orders, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := *readHistories
	if raceEnabled {
		n = min(n, 6)
	}
	for _, src := range []struct{ name, text string }{
		{"tickets.yaml", string(tickets) + ticketQueries},
		{"tickets_bounded.yaml", strings.ReplaceAll(string(tickets)+ticketQueries, "mode: exact", "mode: bounded")},
		{"orders.yaml", string(orders)},
	} {
		p, err := schema.Parse(src.name, []byte(src.text))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Queries) == 0 {
			t.Fatalf("%s: no queries", src.name)
		}
		t.Run(src.name, func(t *testing.T) {
			var dropped, rows int
			for h := range n {
				d, r := readHistory(t, p, int64(20261207+h), now, arrival(h%3), false)
				dropped, rows = dropped+d, rows+r
			}
			// Else the histories never gave a read anything to return or
			// anything stale to drop.
			if n >= 60 && (dropped == 0 || rows == 0) {
				t.Errorf("%d rows read, %d stale hits dropped", rows, dropped)
			}
		})
	}
}

// arrival is how a history's log comes to the store that is read.
type arrival int

const (
	inOrder arrival = iota
	shuffled
	crashed // in order, the writer dying in the middle of half the batches
)

func (a arrival) String() string { return [...]string{"in order", "shuffled", "with a crash"}[a] }

// readHistory checks one history of TestReadRepairConverges, with the
// store that is read on the test HBase if hb (every clock then the wall
// clock, as HBase's runs); it returns the stale hits the reads with
// repairs dropped and the rows they read.
func readHistory(t *testing.T, p *schema.Plan, seed, now int64, how arrival, hb bool) (dropped, rows int) {
	ctx := context.Background()
	clock := func() int64 { return now }
	if hb {
		clock = func() int64 { return time.Now().UnixMilli() }
	}
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, p, testenv.HistoryOptions{Entities: 2 + r.Intn(4), Now: now, WallClock: hb}), testenv.EntityOf(p))
	if how == shuffled {
		for range len(evs)/2 + 1 {
			evs = append(evs, evs[r.Intn(len(evs))])
		}
		r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	}
	for i, e := range evs {
		c := *e
		c.Stream, c.Offset = "log", int64(i)*10
		evs[i] = &c
	}
	var ends []int
	for off := 0; off < len(evs); {
		off = min(off+1+r.Intn(5), len(evs))
		ends = append(ends, off)
	}
	// A history's stores are closed when it ends, not with its test: a
	// soak of thousands of histories must not hold them all open.
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	open := func() store.Store {
		dir, err := os.MkdirTemp("", "readhistory")
		if err != nil {
			t.Fatal(err)
		}
		st, err := pebble.Open(ctx, dir, pebble.Options{Durability: store.AsyncWAL, Clock: clock, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		closers = append(closers, func() {
			st.Close()
			os.RemoveAll(dir)
		})
		if _, err := ddl.Create(ctx, st, p); err != nil {
			t.Fatal(err)
		}
		return st
	}
	got, shadow := open(), open()
	if hb {
		got = testenv.OpenHBase(t, "rm")
		if _, err := ddl.Create(ctx, got, p); err != nil {
			t.Fatal(err)
		}
	}
	wShadow := write.New(p, shadow, write.Options{Clock: clock})
	wGot := write.New(p, got, write.Options{Clock: clock})
	rGot, rShadow := New(p, got, Options{}), New(p, shadow, Options{})
	reqs := requests(p, evs)
	what := func(b int) string {
		return fmt.Sprintf("%s seed %d, %s, after batch %d of %d", p.Name, seed, how, b, len(ends))
	}
	for b := range ends {
		batch := evs[start(ends, b):ends[b]]
		applyBatch(t, ctx, wShadow, batch)
		if how == crashed && r.Intn(2) == 0 {
			// The writer dies after a few of the batch's row writes (the
			// primary rows go first); reads with repairs run while it is
			// down, and a new writer replays the batch.
			cw, _ := testenv.Crashing(got, r.Intn(6), r)
			if _, _, err := write.New(p, cw, write.Options{Clock: clock}).Apply(ctx, batch); err != nil && !errors.Is(err, testenv.ErrCrashed) {
				t.Fatalf("%s: the writer that dies: %v", what(b), err)
			}
			for _, req := range reqs {
				res := readAll(t, ctx, rGot, req, true)
				dropped += res.DroppedStale
				if err := verified(p, req, res.Rows); err != nil {
					t.Fatalf("%s, the writer down: %v", what(b), err)
				}
			}
			wGot = write.New(p, got, write.Options{Clock: clock})
		}
		applyBatch(t, ctx, wGot, batch)
		if r.Intn(3) != 0 && b != len(ends)-1 {
			continue
		}
		for _, req := range reqs {
			g := readAll(t, ctx, rGot, req, true)
			s := readAll(t, ctx, rShadow, req, false)
			if s.DroppedStale != 0 {
				t.Fatalf("%s: %s %v: the writer alone left %d stale hits", what(b), req.Query, req.Values, s.DroppedStale)
			}
			if gj, sj := rowsJSON(t, g.Rows), rowsJSON(t, s.Rows); gj != sj {
				t.Fatalf("%s: %s %v, read with repairs:\n%s\nwithout reads before:\n%s", what(b), req.Query, req.Values, gj, sj)
			}
			if err := verified(p, req, g.Rows); err != nil {
				t.Fatalf("%s: %v", what(b), err)
			}
			dropped += g.DroppedStale
			rows += len(g.Rows)
		}
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, got, p), testenv.View(t, ctx, shadow, p)); d != "" {
		t.Fatalf("%s seed %d, %s: the store read with repairs differs from the store without reads (- read, + not read):\n%s", p.Name, seed, how, d)
	}
	return dropped, rows
}

// verified checks that every row a read of a thin index returned has the
// values the request asked for (one element of a child list, for a child
// field): the row is the entity as its primary row holds it, so a stale
// hit a read failed to drop shows there. A covering index's rows are its
// own cells, which the reader does not verify.
func verified(p *schema.Plan, req Request, rows []map[string]any) error {
	q := p.Query(req.Query)
	if !p.Table(q.Table).Thin() {
		return nil
	}
	for _, row := range rows {
		for f, want := range req.Values {
			child, name, ok := strings.Cut(f, ".")
			if !ok {
				if fmt.Sprint(row[f]) != fmt.Sprint(want) {
					return fmt.Errorf("%s %v returned %v, whose %s is %v", req.Query, req.Values, row, f, row[f])
				}
				continue
			}
			list, _ := row[child].([]map[string]any)
			if !slices.ContainsFunc(list, func(e map[string]any) bool { return fmt.Sprint(e[name]) == fmt.Sprint(want) }) {
				return fmt.Errorf("%s %v returned %v, with no %s %v", req.Query, req.Values, row, f, want)
			}
		}
	}
	return nil
}

// requests are the requests of every query for every value the log gives
// its fields, each once. Queries over a time range are left out: what they
// return moves with the clock, not with the log.
func requests(p *schema.Plan, evs []*event.Event) []Request {
	var out []Request
	seen := map[string]bool{}
	for _, q := range p.Queries {
		t := p.Table(q.Table)
		if q.Range != nil || t == nil {
			continue
		}
		for _, e := range evs {
			if e.Entity != t.Entity || e.Op == event.Delete {
				continue
			}
			for _, vals := range byValues(q.By, e.State) {
				req := Request{Query: q.Name, Values: vals, Limit: MaxLimit}
				k := fmt.Sprint(q.Name, vals)
				if !seen[k] {
					seen[k] = true
					out = append(out, req)
				}
			}
		}
	}
	return out
}

// byValues are the sets of values a state gives fields: one set, or one
// for each element of the child list the fields are in.
func byValues(fields []string, state map[string]any) []map[string]any {
	child := ""
	for _, f := range fields {
		if c, _, ok := strings.Cut(f, "."); ok {
			child = c
		}
	}
	take := func(elem map[string]any) map[string]any {
		vals := map[string]any{}
		for _, f := range fields {
			if c, name, ok := strings.Cut(f, "."); ok && c == child {
				v, ok := elem[name]
				if !ok {
					return nil
				}
				vals[f] = v
				continue
			}
			v, ok := state[f]
			if !ok || v == nil {
				return nil
			}
			vals[f] = v
		}
		return vals
	}
	if child == "" {
		if v := take(nil); v != nil {
			return []map[string]any{v}
		}
		return nil
	}
	list, _ := state[child].([]map[string]any)
	var out []map[string]any
	for _, elem := range list {
		if v := take(elem); v != nil {
			out = append(out, v)
		}
	}
	return out
}

// readAll reads every page of req and returns them as one result.
func readAll(t *testing.T, ctx context.Context, rd *Reader, req Request, repair bool) Result {
	t.Helper()
	req.Repair = repair
	var all Result
	for range 1000 {
		res, err := rd.Run(ctx, req)
		if err != nil {
			t.Fatalf("%s %v: %v", req.Query, req.Values, err)
		}
		all.Rows = append(all.Rows, res.Rows...)
		all.DroppedStale += res.DroppedStale
		all.Repaired += res.Repaired
		if res.Next == "" {
			return all
		}
		req.Next = res.Next
	}
	t.Fatalf("%s %v: more than 1000 pages", req.Query, req.Values)
	return all
}

func rowsJSON(t *testing.T, rows []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func applyBatch(t *testing.T, ctx context.Context, w *write.Writer, evs []*event.Event) {
	t.Helper()
	if _, rej, err := w.Apply(ctx, evs); err != nil || len(rej) > 0 {
		t.Fatalf("apply: %v, refused %v", err, rej)
	}
}

// start is where batch b of a log cut at ends begins.
func start(ends []int, b int) int {
	if b == 0 {
		return 0
	}
	return ends[b-1]
}
