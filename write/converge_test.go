package write

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

var histories = flag.Int("histories", 0, "random histories per convergence property (default 1000, 50 under -race)")

func historyCount() int {
	switch {
	case *histories > 0:
		return *histories
	case raceEnabled:
		return 50
	}
	return 1000
}

// ordersPlan is the orders example with daily_units in mode exact (one
// contribution cell per order), the mode these tests were written for; the
// example itself counts in mode bounded (bounded_test.go).
func ordersPlan(t testing.TB) *schema.Plan {
	t.Helper()
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "mode: bounded", "mode: exact", 1)
	if src == string(b) {
		t.Fatal("orders.yaml has no daily_units mode: bounded")
	}
	p, err := schema.Parse("orders_exact.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// history makes the events of a few orders and the products they name.
func history(r *rand.Rand, entities int) []*event.Event { return historyNS(r, entities, "") }

// historyNS is history with every id (orders, customers, SKUs) starting
// with ns, so that runs sharing tables do not share rows.
func historyNS(r *rand.Rand, entities int, ns string) []*event.Event {
	return historyOf(r, entities, ns, false)
}

// poisonMark in an event id marks an event the writer must refuse: the
// model leaves it out, and run accepts its rejection.
const poisonMark = "!poison"

// refusedStatus is a status value the refusing store (refuseStore) turns
// down as the store would a cell over its limit, which the writer cannot
// foresee: its batch must be split to find the event.
const refusedStatus = "REFUSED"

// historyOf makes orders at versions 1..k each: random status, totals and
// items; a customer or placedAt that changes between versions (the order
// moves to another primary row); deletes with hints of the current row, of
// an older row or none, and re-creations after them; now and then an event
// the store cannot take (a status too long for a row key; with refused,
// one the refusing store turns down). Products get upserts (a name copied
// live into orders, sometimes none) and deletes, at versions of their own.
func historyOf(r *rand.Rand, entities int, ns string, refused bool) []*event.Event {
	statuses := []string{"OPEN", "PAID", "SHIPPED", "CANCELLED"}
	var evs []*event.Event
	for e := 0; e < entities; e++ {
		id := fmt.Sprintf("%so-%d", ns, e)
		cust := fmt.Sprintf("%sc-%d", ns, r.Intn(3))
		placed := int64(1_760_000_000_000 + r.Intn(3)*86_400_000 + r.Intn(1000))
		firstCust, firstPlaced := cust, placed
		n := 1 + r.Intn(5)
		for v := 1; v <= n; v++ {
			ev := &event.Event{ID: fmt.Sprintf("%s-v%d", id, v), Entity: "order", Key: map[string]any{"orderId": id}, Version: int64(v)}
			if v > 1 && r.Intn(6) == 0 {
				ev.Op = event.Delete
				switch r.Intn(3) {
				case 0:
					ev.Hints = map[string]any{"customerId": cust, "placedAt": placed}
				case 1:
					ev.Hints = map[string]any{"customerId": firstCust, "placedAt": firstPlaced}
				}
				evs = append(evs, ev)
				continue
			}
			if v > 1 && r.Intn(4) == 0 {
				// A corrected customer or date: another primary row.
				if r.Intn(2) == 0 {
					cust = fmt.Sprintf("%sc-%d", ns, r.Intn(3))
				} else {
					placed = int64(1_760_000_000_000 + r.Intn(3)*86_400_000 + r.Intn(1000))
				}
			}
			ev.Op = event.Upsert
			status := statuses[r.Intn(len(statuses))]
			switch {
			case r.Intn(15) == 0:
				status = strings.Repeat("X", 40_000) // over the row key limit in orders_by_status
				ev.ID += poisonMark
			case refused && r.Intn(12) == 0:
				status = refusedStatus
				ev.ID += poisonMark
			}
			st := map[string]any{"orderId": id, "customerId": cust, "placedAt": placed, "status": status}
			if r.Intn(3) > 0 {
				st["totalCents"] = int64(r.Intn(10000))
			}
			var items []map[string]any
			line := int32(0)
			for i := 0; i < r.Intn(4); i++ {
				line += int32(1 + r.Intn(2))
				items = append(items, map[string]any{"line": line, "sku": fmt.Sprintf("%ss-%d", ns, r.Intn(3)), "quantity": int64(1 + r.Intn(4)), "name": "snapshot"})
			}
			if items != nil {
				st["items"] = items
			}
			ev.State = st
			evs = append(evs, ev)
		}
	}
	for k := 0; k < 3; k++ {
		if r.Intn(3) == 0 {
			continue
		}
		sku := fmt.Sprintf("%ss-%d", ns, k)
		for v := 1; v <= 1+r.Intn(4); v++ {
			ev := &event.Event{ID: fmt.Sprintf("%s-v%d", sku, v), Entity: "product", Key: map[string]any{"sku": sku}, Version: int64(v)}
			switch {
			case v > 1 && r.Intn(4) == 0:
				ev.Op = event.Delete
			default:
				ev.Op = event.Upsert
				ev.State = map[string]any{"sku": sku, "priceCents": int64(r.Intn(500))}
				if r.Intn(5) > 0 {
					// Versions 2 and 3 share a name: the second is a
					// price change, which rewrites no order once the
					// first's fan-out is done.
					ev.State["name"] = fmt.Sprintf("name %d of %s", v/2, sku)
				}
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// entityOf names an event's entity and key, for per-entity bookkeeping.
func entityOf(e *event.Event) string {
	if e.Entity == "product" {
		return "product\x00" + e.Key["sku"].(string)
	}
	return e.Entity + "\x00" + e.Key["orderId"].(string)
}

// interleave keeps each entity's events in order and mixes entities.
func interleave(r *rand.Rand, evs []*event.Event) []*event.Event {
	return testenv.Interleave(r, evs, entityOf)
}

// tableState is every visible non-bookkeeping cell: table -> row -> column -> value.
type tableState map[string]map[string]map[string]string

func (ts tableState) put(table string, row []byte, fam string, q, v []byte) {
	if ts[table] == nil {
		ts[table] = map[string]map[string]string{}
	}
	if ts[table][string(row)] == nil {
		ts[table][string(row)] = map[string]string{}
	}
	ts[table][string(row)][fam+":"+string(q)] = string(v)
}

func (ts tableState) diff(o tableState) string {
	var out []string
	tables := map[string]bool{}
	for t := range ts {
		tables[t] = true
	}
	for t := range o {
		tables[t] = true
	}
	for t := range tables {
		rows := map[string]bool{}
		for r := range ts[t] {
			rows[r] = true
		}
		for r := range o[t] {
			rows[r] = true
		}
		for r := range rows {
			a, b := ts[t][r], o[t][r]
			cols := map[string]bool{}
			for c := range a {
				cols[c] = true
			}
			for c := range b {
				cols[c] = true
			}
			for c := range cols {
				av, aok := a[c]
				bv, bok := b[c]
				if aok != bok || av != bv {
					out = append(out, fmt.Sprintf("%s %s %s: got %q (%v), want %q (%v)", t, store.Printable([]byte(r)), store.Printable([]byte(c)), av, aok, bv, bok))
				}
			}
		}
	}
	sort.Strings(out)
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... %d more", len(out)-10))
	}
	return strings.Join(out, "\n")
}

func readAll(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan) tableState {
	return readAllNS(t, ctx, st, p, "")
}

// readAllNS reads only the rows whose key holds ns (every key of a
// historyNS run does: they all encode an order id or a SKU).
func readAllNS(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan, ns string) tableState {
	ts := tableState{}
	for _, tbl := range p.Tables {
		eachRow(t, ctx, st, tbl.Name, func(row store.Row) {
			if ns != "" && !bytes.Contains(row.Key, []byte(ns)) {
				return
			}
			if tbl.Role == schema.RoleLocator {
				// What a locator says of a deleted entity depends on the
				// order events came in; of a live one, it names its row.
				for _, q := range testenv.LocatedAlive(t, ctx, st, p, tbl, row) {
					ts.put(tbl.Name, row.Key, layout.BookFamily(tbl), q, nil)
				}
				return
			}
			var live map[string]bool // the live copies a reader would use
			if tbl.Role == schema.RolePrimary {
				if live = testenv.EffectiveLive(t, p, tbl, row); live == nil {
					return // a deleted entity: readers see nothing
				}
			}
			for _, c := range row.Cells {
				if tbl.Role == schema.RolePrimary && (layout.IsBookkeeping(c.Qualifier) ||
					layout.IsLive(c.Qualifier) && !live[string(c.Qualifier)]) {
					continue
				}
				ts.put(tbl.Name, row.Key, c.Family, c.Qualifier, c.Value)
			}
		})
	}
	return ts
}

// eachRow calls fn with every row of a table in key order (a row is valid
// until fn returns) and fails the test when the scan fails.
func eachRow(t testing.TB, ctx context.Context, st store.Store, table string, fn func(store.Row)) {
	t.Helper()
	testenv.EachRow(t, ctx, st, table, fn)
}

// model computes the expected store from the newest valid event of every
// entity: primary rows, copies, locators, live copies of product names
// and the products' reference rows.
func model(t testing.TB, p *schema.Plan, evs []*event.Event) (tableState, map[string]int64) {
	final := map[string]*event.Event{}
	for _, e := range evs {
		if strings.Contains(e.ID, poisonMark) {
			continue
		}
		k := entityOf(e)
		if f := final[k]; f == nil || e.Version > f.Version {
			final[k] = e
		}
	}
	ts := tableState{}
	units := map[string]int64{} // "day|sku" -> units, computed from states directly
	ent := p.Entity("order")
	ref := ent.References[0]
	lookup := layout.LookupFor(p, ent, ref)
	liveName := map[string][]byte{} // sku -> the name orders copy live
	for _, e := range final {
		if e.Entity != "product" {
			continue
		}
		lr, err := layout.NewLiveRef(p, ref, lookup, e.Key["sku"])
		if err != nil {
			t.Fatal(err)
		}
		state := layout.RefUpserted
		if e.Op == event.Delete {
			state = layout.RefDeleted
		}
		fam := lookup.Families[0].Name
		ts.put(lookup.Name, lr.Row, fam, layout.QualRefState, []byte{state})
		// The first refresh of a key fans out, and every fan-out that runs
		// to its end marks the row.
		ts.put(lookup.Name, lr.Row, fam, layout.QualRefFanned, nil)
		if name, ok := e.State["name"]; ok && e.Op == event.Upsert {
			b, err := layout.EncodeValue(rowkey.String, name)
			if err != nil {
				t.Fatal(err)
			}
			ts.put(lookup.Name, lr.Row, fam, layout.SourceQualifier("name"), b)
			liveName[e.Key["sku"].(string)] = b
		}
	}
	for _, e := range final {
		if e.Op == event.Delete || e.Entity != "order" {
			continue
		}
		d, err := layout.Derive(p, ent, e.State)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Primary {
			ts.put(d.PrimaryTable, d.PrimaryKey, c.Family, c.Qualifier, c.Value)
		}
		if lt := p.Locator(ent.Name); lt != nil {
			row, err := lt.Key.Encode(e.Key)
			if err != nil {
				t.Fatal(err)
			}
			ts.put(lt.Name, row, layout.BookFamily(lt), layout.LocationQualifier(d.PrimaryKey), nil)
		}
		refs, err := layout.LiveRefs(p, ent, e.State)
		if err != nil {
			t.Fatal(err)
		}
		for _, lr := range refs {
			if b, ok := liveName[lr.Value.(string)]; ok {
				ts.put(d.PrimaryTable, d.PrimaryKey, layout.BookFamily(p.Primary(ent.Name)), layout.LiveQualifier(lr.Ref, lr.Key, "name"), b)
			}
		}
		for _, it := range d.Items {
			for _, c := range it.Cells {
				ts.put(it.Table, it.Row, c.Family, c.Qualifier, c.Value)
			}
		}
		items, _ := e.State["items"].([]map[string]any)
		day := rowkey.DayNumber(e.State["placedAt"].(int64))
		for _, it := range items {
			units[fmt.Sprintf("%d|%s", day, it["sku"])] += it["quantity"].(int64)
		}
	}
	return ts, units
}

// counterSums adds up the daily_units contributions found in the store.
func counterSums(t testing.TB, p *schema.Plan, ts tableState) map[string]int64 {
	tbl := p.Table("daily_units")
	out := map[string]int64{}
	for row, cols := range ts["daily_units"] {
		key := []byte(row)
		ck, _ := layout.CounterKey(tbl, key) // less the bucket byte, if any
		parts, err := tbl.Key.Decode(ck)
		if err != nil {
			t.Fatalf("counter row %q: %v", row, err)
		}
		vals := map[string]any{}
		for _, d := range parts {
			vals[d.Part.Field] = d.Value // day(placedAt) gives that day's midnight
		}
		for _, v := range cols {
			n, err := layout.CellInt64([]byte(v))
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%d|%s", rowkey.DayNumber(vals["placedAt"].(int64)), vals["items.sku"])] += n
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// crashStore fails a Batch after a budget of row writes, having written
// the rows before it: a process that died in the middle of a batch.
type crashStore struct {
	store.Store
	mu     sync.Mutex
	budget int // rows still allowed; < 0: unlimited
	writes int
	// then holds the budgets of the processes restarted after a crash,
	// in turn; once they are used up, a restarted process does not crash.
	then []int
	// crashes holds the writes done when each crash came.
	crashes []int
}

// restart takes the budget of the next process, after a crash.
func (c *crashStore) restart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashes = append(c.crashes, c.writes)
	c.budget = -1
	if len(c.then) > 0 {
		c.budget, c.then = c.then[0], c.then[1:]
	}
}

// crashed describes the crashes that came, for a failure message.
func (c *crashStore) crashed(total int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := fmt.Sprintf("crash after write %d of %d", c.crashes[0], total)
	for _, n := range c.crashes[1:] {
		s += fmt.Sprintf(", and again after write %d", n)
	}
	return s
}

// alsoAfter returns, for half the seeds, the budget of a second crash
// while the first is repaired (a write of total drawn at random), else
// none: crashEvery and the Run tests restart each process once more.
func alsoAfter(seed int64, total int) []int {
	r := rand.New(rand.NewSource(seed))
	if r.Intn(2) == 0 {
		return []int{r.Intn(total)}
	}
	return nil
}

var errCrash = errors.New("injected crash")

func (c *crashStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	c.mu.Lock()
	n := len(ms)
	crash := false
	if c.budget >= 0 && n > c.budget {
		n, crash = c.budget, true
	}
	if c.budget >= 0 {
		c.budget -= n
	}
	c.writes += n
	c.mu.Unlock()
	errs, err := c.Store.Batch(ctx, table, ms[:n])
	if err != nil {
		return errs, err
	}
	if crash {
		return nil, errCrash
	}
	return errs, nil
}

func (c *crashStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	c.mu.Lock()
	if c.budget == 0 {
		c.mu.Unlock()
		return errCrash
	}
	if c.budget > 0 {
		c.budget--
	}
	c.writes++
	c.mu.Unlock()
	return c.Store.Mutate(ctx, table, m)
}

// refuseStore refuses, as a store refuses a cell over its limit, every row
// mutation that puts the value refusedStatus: a refusal the writer's own
// checks cannot foresee.
type refuseStore struct{ store.Store }

func refusedRow(table string, m store.RowMutation) error {
	for _, x := range m.Mutations {
		if x.Kind == store.Put && string(x.Value) == refusedStatus {
			return &store.CellTooBigError{Table: table, Row: m.Row, Family: x.Family, Qualifier: x.Qualifier, Size: 1, Limit: 0}
		}
	}
	return nil
}

func (s refuseStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	errs := make([]error, len(ms))
	var ok []store.RowMutation
	var at []int
	for i, m := range ms {
		if errs[i] = refusedRow(table, m); errs[i] == nil {
			ok, at = append(ok, m), append(at, i)
		}
	}
	res, err := s.Store.Batch(ctx, table, ok)
	for j, e := range res {
		errs[at[j]] = e
	}
	return errs, err
}

func (s refuseStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	if err := refusedRow(table, m); err != nil {
		return err
	}
	return s.Store.Mutate(ctx, table, m)
}

func (c *crashStore) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	c.mu.Lock()
	if c.budget == 0 {
		c.mu.Unlock()
		return false, errCrash
	}
	if c.budget > 0 {
		c.budget--
	}
	c.writes++
	c.mu.Unlock()
	return c.Store.CheckAndMutate(ctx, table, cond, m)
}

func (c *crashStore) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	c.mu.Lock()
	if c.budget == 0 {
		c.mu.Unlock()
		return nil, errCrash
	}
	if c.budget > 0 {
		c.budget--
	}
	c.writes++
	c.mu.Unlock()
	return c.Store.Increment(ctx, table, inc)
}

// run applies a log in batches, like the file source: on an error it
// resumes from the start of the failed batch (the committed offset).
func run(t testing.TB, ctx context.Context, w *Writer, log []*event.Event, sizes *rand.Rand) {
	for off := 0; off < len(log); {
		n := 1 + sizes.Intn(6)
		end := min(off+n, len(log))
		_, rej, err := applyIsolating(ctx, w, log[off:end])
		if err != nil {
			if errors.Is(err, errCrash) {
				continue // restart: replay from the committed offset
			}
			t.Fatal(err)
		}
		for _, r := range rej {
			if !strings.Contains(r.Event.ID, poisonMark) {
				t.Fatalf("rejected %s: %v", r.Event.ID, r.Reason)
			}
		}
		off = end
	}
}

type fixture struct {
	st   *pebble.Store
	dir  string // st's directory
	plan *schema.Plan
	// ns is what the runs write through: st with the run's table prefix.
	// Writers hold ns, never st, so that a fresh store can take st's place.
	ns   *nsStore
	runs int
	// clock, when set, is the store's clock (pebble.Options.Clock).
	clock func() int64
}

// runsPerStore is how many runs of a fixture share one store before reset
// starts a fresh one. Every run leaves its tables behind (see reset), and
// a store's memory grows with the tables it holds, about 2 MB a history of
// TestConvergence: a soak of ten times the default histories would need
// 20 GB in one store. A shard of the default suite passes the bound
// several times, so the fresh store is part of every run of the suite.
const runsPerStore = 1000

func newFixture(t testing.TB) *fixture {
	f := &fixture{plan: ordersPlan(t), ns: &nsStore{}}
	f.open(t)
	t.Cleanup(func() { f.close(t) })
	return f
}

// open starts a store in a directory of its own.
func (f *fixture) open(t testing.TB) {
	dir, err := os.MkdirTemp("", "converge")
	if err != nil {
		t.Fatal(err)
	}
	st, err := pebble.Open(context.Background(), dir, pebble.Options{Durability: store.AsyncWAL, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.st, f.dir, f.ns.Store = st, dir, st
}

// close closes the store and removes its directory.
func (f *fixture) close(t testing.TB) {
	if err := f.st.Close(); err != nil {
		t.Errorf("close the fixture's store: %v", err)
	}
	if err := os.RemoveAll(f.dir); err != nil {
		t.Errorf("remove the fixture's store: %v", err)
	}
}

// reset starts an empty set of tables. Each run gets tables of its own
// (a name prefix) rather than dropping the last run's: thousands of drops
// would pile range deletions into Pebble's memtable and slow every read.
// Every runsPerStore runs the tables move to a fresh store instead.
func (f *fixture) reset(t testing.TB, ctx context.Context) {
	f.runs++
	if f.runs%runsPerStore == 0 {
		f.close(t)
		f.open(t)
	}
	f.ns.Prefix = fmt.Sprintf("r%d_", f.runs)
	if _, err := ddl.Create(ctx, f.ns, f.plan); err != nil {
		t.Fatal(err)
	}
}

// nsStore gives table names a prefix, so that many runs share one store.
type nsStore = testenv.Prefixed

// TestConvergence: in order, shuffled with duplicates, and with a crash
// after every possible write followed by a resume, every history ends in
// the model's state.
//
// The histories run in a few parallel shards, each on a store of its own:
// most of a history's time is spent waiting for log syncs, which overlap.
func TestConvergence(t *testing.T) {
	seed := int64(20261130)
	n := historyCount()
	t.Logf("%d histories from seed %d", n, seed)
	inShards(t, n, newFixture, func(t *testing.T, f *fixture, h int) { convergeHistory(t, f, seed, h) })
}

// inShards checks histories 0..n-1 in a few parallel shards, each on a
// fixture of its own that setup makes.
func inShards(t *testing.T, n int, setup func(testing.TB) *fixture, check func(t *testing.T, f *fixture, h int)) {
	const shards = 4
	for s := 0; s < shards; s++ {
		t.Run(fmt.Sprintf("shard%d", s), func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			for h := s; h < n; h += shards {
				check(t, f, h)
			}
		})
	}
}

// withDuplicates appends len(evs)/2+1 events picked from evs to log, as a
// log that redelivers, and shuffles the whole.
func withDuplicates(r *rand.Rand, log, evs []*event.Event) []*event.Event {
	for i := 0; i < len(evs)/2+1; i++ {
		log = append(log, evs[r.Intn(len(evs))])
	}
	r.Shuffle(len(log), func(i, j int) { log[i], log[j] = log[j], log[i] })
	return log
}

// convergeHistory checks one history of TestConvergence.
func convergeHistory(t *testing.T, f *fixture, seed int64, h int) {
	ctx := context.Background()
	{
		r := rand.New(rand.NewSource(seed + int64(h)))
		evs := historyOf(r, 1+r.Intn(4), "", true)
		want, wantUnits := model(t, f.plan, evs)
		check := func(name string) {
			t.Helper()
			got := readAll(t, ctx, f.ns, f.plan)
			if d := got.diff(want); d != "" {
				t.Fatalf("history %d (seed %d), %s: store differs from the model:\n%s", h, seed+int64(h), name, d)
			}
			if gu := counterSums(t, f.plan, got); fmt.Sprint(gu) != fmt.Sprint(wantUnits) {
				t.Fatalf("history %d, %s: units %v, want %v", h, name, gu, wantUnits)
			}
		}

		// In log order.
		f.reset(t, ctx)
		inOrder := interleave(r, evs)
		run(t, ctx, New(f.plan, withSyncOf(refuseStore{f.ns}, f.st), Options{}), inOrder, rand.New(rand.NewSource(int64(h))))
		check("in order")

		// Shuffled, with duplicates.
		f.reset(t, ctx)
		shuffled := withDuplicates(r, append([]*event.Event(nil), evs...), evs)
		run(t, ctx, New(f.plan, withSyncOf(refuseStore{f.ns}, f.st), Options{}), shuffled, rand.New(rand.NewSource(int64(h))))
		check("shuffled with duplicates")

		// A crash after every possible write, then a resume: of the log in
		// order, on the writer's lanes (no positions: every write after a
		// failure is taken as unfinished), and of the shuffled log with
		// positions, where a crash's replay may come after a newer version
		// of its entity and the positions alone tell what is unfinished.
		crashEvery(t, f, h, inOrder, "in order", check)
		crashEvery(t, f, h, positioned(shuffled, "log"), "shuffled", check)
	}
}

// crashEvery applies log once for every write a run of it makes, crashing
// the writer after that write and resuming, as Run does, from the start of
// the batch that failed (in batches of other sizes) with a new writer, and
// checks the store after each. Every other resume crashes again (alsoAfter):
// a crash while the last one is repaired.
func crashEvery(t *testing.T, f *fixture, h int, log []*event.Event, name string, check func(string)) {
	t.Helper()
	ctx := context.Background()
	f.reset(t, ctx)
	counted := &crashStore{Store: refuseStore{f.ns}, budget: -1}
	run(t, ctx, New(f.plan, withSyncOf(counted, f.st), Options{Clock: f.clock}), log, rand.New(rand.NewSource(int64(h))))
	total := counted.writes
	for k := 0; k < total; k++ {
		f.reset(t, ctx)
		cs := &crashStore{Store: refuseStore{f.ns}, budget: k, then: alsoAfter(int64(h)<<20+int64(k), total)}
		w := New(f.plan, withSyncOf(cs, f.st), Options{Clock: f.clock})
		sizes := rand.New(rand.NewSource(int64(h)))
		for off := 0; off < len(log); {
			end := min(off+1+sizes.Intn(6), len(log))
			_, _, err := applyIsolating(ctx, w, log[off:end])
			if errors.Is(err, errCrash) {
				cs.restart()
				w = New(f.plan, withSyncOf(cs, f.st), Options{Clock: f.clock})
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			off = end
		}
		if len(cs.crashes) == 0 {
			t.Fatalf("history %d: crash at write %d of %d never happened", h, k, total)
		}
		check(name + ", " + cs.crashed(total))
	}
}

// withSyncOf makes a test wrapper a store.Syncer when the store below it is
// one, so that the writer takes the path it takes on the bare store (one
// log sync per batch on Pebble, none on HBase).
func withSyncOf(st, base store.Store) store.Store {
	if _, ok := base.(store.Syncer); ok {
		return syncer{Store: st}
	}
	return st
}

// syncer makes a wrapped store a store.Syncer, as the embedded store is, so
// that the writer takes the same path (sync_wal writes sent without a sync,
// one Sync a batch). Its Sync does nothing: these tests crash the writer
// by refusing its writes inside one process, where everything written is
// read back whether synced or not, and what a sync keeps across a real
// crash is the store's own tests' (store/pebble crash_test.go and
// sync_test.go). A real fsync a batch made the histories wait on the disk
// for two thirds of their time (100 histories: 120 s against 39 s).
type syncer struct {
	store.Store
}

func (syncer) Sync(context.Context) error { return nil }
