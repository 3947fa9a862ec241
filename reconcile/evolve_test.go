package reconcile

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

var evolveHistories = flag.Int("evolve-histories", 40, "histories TestSchemaEvolution runs for each schema change")

// TestSchemaEvolution holds reconcile to what a team changing the tables
// of a running schema relies on: the log's first part applied under the
// old schema, the writers moved to the new one (which creates new tables),
// repairs, and the rest of the log applied under the new schema must leave
// the store the whole log applied under the new schema leaves. No other
// test can make these stores: every copy they hold was written by a writer
// that knew of its table as it is, so the bookkeeping in the primary rows
// (what a bounded counter counted, which live copies a row holds) always
// matched the tables. Each derived table of four schemas is changed in
// turn, in each way a team changes one (schemaChanges).
func TestSchemaEvolution(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets := readFile(t, "../write/testdata/tickets.yaml")
	bounded := strings.ReplaceAll(string(tickets), "mode: exact", "mode: bounded")
	device := readFile(t, "../examples/device_events.yaml")
	orders := readFile(t, "../examples/orders.yaml")
	n := *evolveHistories
	if raceEnabled {
		n = min(n, 4)
	}
	tried := 0
	for _, src := range []struct{ name, text string }{
		{"device_events.yaml", string(device)},
		{"tickets.yaml", string(tickets)},
		{"tickets_bounded.yaml", bounded},
		{"orders.yaml", string(orders)},
	} {
		full, err := schema.Parse(src.name, []byte(src.text))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range schemaChanges(t, src.name, []byte(src.text), full) {
			tried++
			t.Run(src.name+"/"+c.name, func(t *testing.T) {
				var found [2]int // in log order, shuffled
				for h := range n {
					// Every other history arrives shuffled, with duplicates.
					if evolveHistory(t, c.old, full, c, int64(20261207+h), now, evolveOptions{shuffle: h%2 == 1}) > 0 {
						found[h%2]++
					}
				}
				// Else the histories never gave the change anything to do.
				for i, kind := range []string{"in log order", "shuffled"} {
					if n >= 40 && found[i] < n/20 {
						t.Errorf("the first repair found differences in %d of %d histories %s", found[i], n/2, kind)
					}
				}
			})
		}
	}
	if tried < 40 {
		t.Errorf("only %d schema changes tried", tried)
	}
}

// schemaChange is an old schema that the new one changes a table of.
type schemaChange struct {
	name  string // what the new schema changes
	table string
	old   *schema.Plan
	// replay: the change needs the log replayed from its start (a live
	// copy added with its lookup table), not only the repairs.
	replay bool
}

// schemaChanges lists, for every derived table but locators (their own
// test: reconcile/locator_test.go), the old schemas a team moves from to
// full: without the table (it is added); a partial table (when) that was
// whole; a counter in another mode; an index that covered one field less.
func schemaChanges(t *testing.T, file string, text []byte, full *schema.Plan) []schemaChange {
	var out []schemaChange
	add := func(name string, tbl *schema.Table, replay bool, edit func(root, table *yaml.Node)) {
		old, err := editSchema(file, text, tbl.Name, edit)
		if err != nil {
			t.Fatalf("%s, %s: the old schema: %v", file, name, err)
		}
		out = append(out, schemaChange{name: name, table: tbl.Name, old: old, replay: replay})
	}
	for _, tbl := range full.Tables {
		if tbl.Role == schema.RolePrimary || tbl.Role == schema.RoleLocator {
			continue
		}
		add(tbl.Name+" added", tbl, tbl.Role == schema.RoleLookup, func(root, _ *yaml.Node) { dropTable(root, tbl.Name) })
		// A when on a row key field made partial what could not have been
		// whole: the old schema's writer refuses an entity without the field.
		if tbl.When != "" && !slices.Contains(tbl.Key.Fields(), tbl.When) {
			add(tbl.Name+" made partial", tbl, false, func(_, table *yaml.Node) { dropKey(table, "when") })
		}
		if tbl.Role == schema.RoleCounter {
			for _, mode := range []string{"exact", "bounded", "fast"} {
				if mode != string(tbl.Counter.Mode) {
					add(fmt.Sprintf("%s from mode %s", tbl.Name, mode), tbl, false, func(_, table *yaml.Node) { setKey(table, "mode", mode) })
				}
			}
		}
		if slices.ContainsFunc(tbl.Key.Parts(), func(p rowkey.Part) bool { return p.Func == rowkey.Salt }) {
			add(tbl.Name+" salted", tbl, false, func(_, table *yaml.Node) { unsalt(table) })
		}
		if tbl.Role == schema.RoleIndex && len(tbl.Covering) > 0 {
			last := tbl.Covering[len(tbl.Covering)-1]
			add(fmt.Sprintf("%s covering %s", tbl.Name, last), tbl, false, func(_, table *yaml.Node) { uncover(table, last) })
		}
	}
	return out
}

// evolveOptions are how evolveHistory runs a history.
type evolveOptions struct {
	// wall: every clock is the wall clock (HBase's runs), so no version
	// comes near a TTL.
	wall bool
	// hb: the store that evolves is on the test HBase; the stores it is
	// compared with are embedded.
	hb bool
	// shuffle: the log arrives in no order, with duplicates, each event at
	// its own position of one stream, as a topic a producer wrote out of
	// order and a consumer redelivered. The cut falls anywhere in it.
	shuffle bool
}

// evolveHistory checks one history of TestSchemaEvolution. It returns the
// differences the first repair found.
func evolveHistory(t *testing.T, old, full *schema.Plan, c schemaChange, seed, now int64, o evolveOptions) int64 {
	added := c.name
	ctx := context.Background()
	clock := func() int64 { return now }
	if o.wall {
		clock = func() int64 { return time.Now().UnixMilli() }
	}
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, full, testenv.HistoryOptions{Entities: 1 + r.Intn(4), Now: now, WallClock: o.wall}), testenv.EntityOf(full))
	if o.shuffle {
		evs = shuffledLog(r, evs)
		added += ", shuffled"
	}
	cut := r.Intn(len(evs) + 1)
	stores := &historyStores{t: t, clock: clock}
	defer stores.close()
	open := stores.open
	create := func(st store.Store, p *schema.Plan) {
		if _, err := ddl.Create(ctx, st, p); err != nil {
			t.Fatal(err)
		}
	}
	applyAll := func(w *write.Writer, evs []*event.Event) {
		for off := 0; off < len(evs); {
			end := min(off+1+r.Intn(6), len(evs))
			apply(t, ctx, w, evs[off:end])
			off = end
		}
	}

	want := open()
	create(want, full)
	applyAll(write.New(full, want, write.Options{Clock: clock}), evs)

	var got store.Store
	if o.hb {
		got = testenv.OpenHBase(t, "ev")
	} else {
		got = open()
	}
	create(got, old)
	// The old schema's writer refuses the events of an entity it keeps
	// nothing of (a referenced entity whose live copies are what is
	// added): they went to the dead letters then.
	var first []*event.Event
	for _, ev := range evs[:cut] {
		if old.Primary(ev.Entity) != nil || len(layout.ReferencesTo(old, ev.Entity)) > 0 {
			first = append(first, ev)
		}
	}
	applyAll(write.New(old, got, write.Options{Clock: clock}), first)
	create(got, full)
	// mid is the first part of the log under the new schema: what the
	// repairs must make of got, except live copies added with their lookup
	// table, whose source the old schema kept nowhere.
	var mid store.Store
	if !c.replay {
		mid = open()
		create(mid, full)
		applyAll(write.New(full, mid, write.Options{Clock: clock}), evs[:cut])
	}
	dry := run(t, ctx, full, got, Options{DryRun: true, Clock: clock, WritersStopped: true})
	// Split over parts, each way the job runs split, it finds the same.
	for _, way := range splitWays[1:] {
		if d := findings(way.run(t, ctx, full, got, Options{DryRun: true, Clock: clock, WritersStopped: true})); d != findings(dry) {
			t.Fatalf("%s seed %d: %s after %d of %d events; a dry run %s found %s, in one process %s", full.Name, seed, added, cut, len(evs), way.name, d, findings(dry))
		}
	}
	// The repairs run one way of the three, in turn by seed.
	repair := splitWays[seed%int64(len(splitWays))]
	added += ", repaired " + repair.name
	// The stores the writer made under the new schema alone are clean.
	for _, st := range []store.Store{mid, want} {
		if st == nil {
			continue
		}
		if r := run(t, ctx, full, st, Options{DryRun: true, Clock: clock, WritersStopped: true}); r.Differences() != 0 {
			t.Fatalf("%s seed %d: a store the new schema's writer made has differences:\n%s", full.Name, seed, reportText(t, r))
		}
	}
	if mid != nil && dry.Differences() == 0 {
		if d := testenv.DiffLines(testenv.View(t, ctx, got, full), testenv.View(t, ctx, mid, full)); d != "" {
			t.Fatalf("%s seed %d: %s after %d of %d events; a dry run found nothing, and the store differs from that part of the log applied under the new schema (- got, + want):\n%s", full.Name, seed, added, cut, len(evs), d)
		}
	}
	rep := repair.run(t, ctx, full, got, Options{PurgeMarkers: true, Clock: clock, WritersStopped: true})
	if (dry.Differences() == 0) != (rep.Differences() == 0) {
		t.Fatalf("%s seed %d: %s after %d of %d events; a dry run found %d differences, the repair %d:\n%s", full.Name, seed, added, cut, len(evs), dry.Differences(), rep.Differences(), reportText(t, dry))
	}
	if rep.Failed() != 0 {
		t.Fatalf("%s seed %d: %s after %d of %d events; the repair failed %d:\n%s", full.Name, seed, added, cut, len(evs), rep.Failed(), reportText(t, rep))
	}
	// What the first repair adopted into records the second adds to the
	// totals (adopt.go says why not the first).
	if rep := repair.run(t, ctx, full, got, Options{PurgeMarkers: true, Clock: clock, WritersStopped: true}); rep.Failed() != 0 || rep.Kinds[KindCounter].Missing != 0 {
		t.Fatalf("%s seed %d: %s after %d of %d events; the second repair failed %d, found %d counts to adopt:\n%s", full.Name, seed, added, cut, len(evs), rep.Failed(), rep.Kinds[KindCounter].Missing, reportText(t, rep))
	}
	if rep := run(t, ctx, full, got, Options{DryRun: true, Clock: clock, WritersStopped: true}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: %s after %d of %d events; differences after the repair:\n%s", full.Name, seed, added, cut, len(evs), reportText(t, rep))
	}
	// Right after the repairs, before later events could mend anything.
	if mid != nil {
		if d := testenv.DiffLines(testenv.View(t, ctx, got, full), testenv.View(t, ctx, mid, full)); d != "" {
			t.Fatalf("%s seed %d: %s after %d of %d events and repaired; the store differs from that part of the log applied under the new schema (- got, + want):\n%s", full.Name, seed, added, cut, len(evs), d)
		}
	}
	// A live copy's source lives in its lookup table's reference rows
	// only, so added with its lookup table it is filled by replaying the
	// log from its start (docs/reconcile.md); anything else from where the
	// old schema's writer stopped.
	rest := evs[cut:]
	if c.replay {
		rest = evs
	}
	applyAll(write.New(full, got, write.Options{Clock: clock}), rest)

	a, b := testenv.View(t, ctx, got, full), testenv.View(t, ctx, want, full)
	if d := testenv.DiffLines(a, b); d != "" {
		t.Fatalf("%s seed %d: %s after %d of %d events, repaired, the rest applied; the store differs from the log applied under the new schema (- got, + want):\n%s", full.Name, seed, added, cut, len(evs), d)
	}
	if rep := run(t, ctx, full, got, Options{DryRun: true, Clock: clock, WritersStopped: true}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: %s after %d of %d events; differences at the end:\n%s", full.Name, seed, added, cut, len(evs), reportText(t, rep))
	}
	return rep.Differences()
}

// splitWays are the ways a team runs the job: in one process, planned in
// parts run apart and merged (an Indexed Job), and as shards that each
// keep the ranges dealt to them. The last two report what they found, or
// repaired, summed.
var splitWays = []struct {
	name string
	run  func(t *testing.T, ctx context.Context, sp *schema.Plan, st store.Store, opts Options) *Report
}{
	{"in one process", func(t *testing.T, ctx context.Context, sp *schema.Plan, st store.Store, opts Options) *Report {
		return run(t, ctx, sp, st, opts)
	}},
	{"in 2 parts merged", func(t *testing.T, ctx context.Context, sp *schema.Plan, st store.Store, opts Options) *Report {
		return runParts(t, ctx, sp, st, 2, opts)
	}},
	{"as shards 0/2 and 1/2", func(t *testing.T, ctx context.Context, sp *schema.Plan, st store.Store, opts Options) *Report {
		sum := newReport(opts.DryRun)
		for i := range 2 {
			o := opts
			o.Shard = Shard{I: i, N: 2}
			sum.Add(run(t, ctx, sp, st, o))
		}
		return sum
	}},
}

// findings is what a report found, kind by kind, as text to compare.
func findings(r *Report) string {
	var b strings.Builder
	for _, k := range []string{KindIndex, KindLookup, KindCounter, KindLive, KindLocator} {
		if c := r.Kinds[k]; c != nil && c.Differences() != 0 {
			fmt.Fprintf(&b, "%s missing %d stale %d orphaned %d drifted %d; ", k, c.Missing, c.Stale, c.Orphaned, c.Drifted)
		}
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

// shuffledLog is evs with duplicates of half of them, in a random order,
// at rising offsets of one stream.
func shuffledLog(r *rand.Rand, evs []*event.Event) []*event.Event {
	log := slices.Clone(evs)
	for range len(evs)/2 + 1 {
		if len(evs) > 0 {
			log = append(log, evs[r.Intn(len(evs))])
		}
	}
	r.Shuffle(len(log), func(i, j int) { log[i], log[j] = log[j], log[i] })
	for i, e := range log {
		c := *e
		c.Stream, c.Offset = "log", int64(i)*10
		log[i] = &c
	}
	return log
}

// editSchema is the schema text with edit applied to its root mapping and
// to table name's mapping.
func editSchema(file string, text []byte, name string, edit func(root, table *yaml.Node)) (*schema.Plan, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	var table *yaml.Node
	for _, e := range section(root, "tables") {
		if e.name == name {
			table = e.node
		}
	}
	if table == nil {
		return nil, fmt.Errorf("no table %s", name)
	}
	edit(root, table)
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return schema.Parse(file, out)
}

// withoutTable is the schema text with table name left out (editSchema).
func withoutTable(file string, text []byte, name string) (*schema.Plan, error) {
	return editSchema(file, text, name, func(root, _ *yaml.Node) { dropTable(root, name) })
}

// dropTable leaves table name out of the schema at root, with every query
// of it. Leaving out a lookup table leaves out the live copies it serves
// (a live copy needs one): a team adds both at once.
func dropTable(root *yaml.Node, name string) {
	dropKeys(root, "tables", func(k string, v *yaml.Node) bool {
		if k != name {
			return false
		}
		entity, ref := mapValue(v, "entity"), mapValue(v, "reference")
		if mapValue(v, "role") == "lookup" {
			for _, e := range section(root, "entities") {
				if e.name != entity {
					continue
				}
				for _, r := range section(e.node, "references") {
					if r.name == ref {
						dropKeys(r.node, "copy", func(_ string, c *yaml.Node) bool { return mapValue(c, "intent") == "live" })
					}
				}
			}
		}
		return true
	})
	dropKeys(root, "queries", func(_ string, v *yaml.Node) bool { return mapValue(v, "table") == name })
}

// unsalt leaves the salt out of a table's row key, and its presplit.
func unsalt(table *yaml.Node) {
	for i := 0; i+1 < len(table.Content); i += 2 {
		if table.Content[i].Value == "rowkey" {
			// An unquoted salt(f, n) in a flow list is two YAML items.
			list := table.Content[i+1]
			var kept []*yaml.Node
			in := false
			for _, n := range list.Content {
				in = in || strings.HasPrefix(n.Value, "salt(")
				if !in {
					kept = append(kept, n)
				}
				in = in && !strings.HasSuffix(n.Value, ")")
			}
			list.Content = kept
		}
	}
	dropKey(table, "presplit")
}

// uncover leaves field out of a table's covering list and its columns.
func uncover(table *yaml.Node, field string) {
	for i := 0; i+1 < len(table.Content); i += 2 {
		if table.Content[i].Value != "covering" {
			continue
		}
		list := table.Content[i+1]
		list.Content = slices.DeleteFunc(list.Content, func(n *yaml.Node) bool { return n.Value == field })
	}
	dropKeys(table, "columns", func(_ string, v *yaml.Node) bool { return v.Value == field })
}

// dropKey removes key from mapping m.
func dropKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// setKey sets key of mapping m to a scalar.
func setKey(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Value: value}
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
}

// dropKeys removes from the mapping under key section of root the entries
// drop picks.
func dropKeys(root *yaml.Node, section string, drop func(string, *yaml.Node) bool) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != section {
			continue
		}
		m := root.Content[i+1]
		var kept []*yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if !drop(m.Content[j].Value, m.Content[j+1]) {
				kept = append(kept, m.Content[j], m.Content[j+1])
			}
		}
		m.Content = kept
	}
}

// mapValue is the scalar under key in mapping m ("" when there is none).
func mapValue(m *yaml.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1].Value
		}
	}
	return ""
}

type entry struct {
	name string
	node *yaml.Node
}

// section lists the entries of the mapping under key in mapping m.
func section(m *yaml.Node, key string) []entry {
	var out []entry
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		s := m.Content[i+1]
		for j := 0; j+1 < len(s.Content); j += 2 {
			out = append(out, entry{s.Content[j].Value, s.Content[j+1]})
		}
	}
	return out
}

// TestAdoptionWithConcurrentWriter adds the orders example's bounded
// counter (daily_units) to a store of orders written without it, then runs
// repairs back to back while the new schema's writer applies the rest of
// the log: adoptions race the writer's records and part cells. The records
// must come out right, so that one repair after the writer stops leaves
// the totals as the whole log under the new schema makes them.
func TestAdoptionWithConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	text := readFile(t, "../examples/orders.yaml")
	full, err := schema.Parse("orders.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	if !full.Table("daily_units").Counter.Bounded() {
		t.Fatal("daily_units is no longer a bounded counter")
	}
	old, err := withoutTable("orders.yaml", text, "daily_units")
	if err != nil {
		t.Fatal(err)
	}
	seeds := *adoptionHistories
	if testing.Short() || raceEnabled {
		seeds = 2
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		// The concurrent test's variants (the job's shape and scans, the
		// writers' way, streams and crashes, products), and orders that
		// move in every other pair of seeds.
		v := variantOf(seed)
		moves := seed%4 < 2
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			_, first, rest := concurrentLog(seed, moves, v)

			want := openStore(t, full)
			apply(t, ctx, write.New(full, want, write.Options{}), first)
			apply(t, ctx, write.New(full, want, write.Options{}), rest)

			got := openStore(t, old)
			apply(t, ctx, write.New(old, got, write.Options{}), first)
			if _, err := ddl.Create(ctx, got, full); err != nil {
				t.Fatal(err)
			}
			job := got
			if v.rowByRow {
				job = testenv.RowByRow(got)
			}
			var missing int64
			runs, died := repairVariantWhile(t, ctx, full, job, seed, v, func(rep *Report) { missing += rep.Kinds[KindCounter].Missing },
				func() { writeStreams(t, ctx, full, got, seed, v, rest) })
			if missing == 0 && died == 0 {
				t.Fatalf("%d repair runs (%s) adopted nothing: the test raced nothing", runs, v)
			}
			// A run beside the writer may add what a writer that read the
			// record before an adoption added too (adopt.go); the first
			// run after the writer stops must leave the totals exact, so
			// the records must be right whatever the runs raced.
			// Two writers of one order (repartitioned) leave what two
			// repairs purging delete markers remove (TestPartitionsAdded).
			repairs, after := 1, Options{WritersStopped: true}
			if v.repartitioned {
				repairs, after.PurgeMarkers = 2, true
			}
			for range repairs {
				if rep := run(t, ctx, full, got, after); rep.Failed() != 0 {
					t.Fatalf("the repair after the writer stopped (%s) failed:\n%s", v, reportText(t, rep))
				}
			}
			if d := testenv.DiffLines(testenv.View(t, ctx, got, full), testenv.View(t, ctx, want, full)); d != "" {
				t.Fatalf("after %d repair runs beside the writer (%s; %d counts adopted), the store differs from the log under the new schema (- got, + want):\n%s", runs, v, missing, d)
			}
			if rep := run(t, ctx, full, got, Options{DryRun: true, WritersStopped: true}); rep.Differences() != 0 {
				t.Fatalf("differences at the end (%s):\n%s", v, reportText(t, rep))
			}
			t.Logf("%s: %d repair runs (and %d died), %d counts adopted", v, runs, died, missing)
		})
	}
}

var adoptionHistories = flag.Int("adoption-histories", 6, "histories TestAdoptionWithConcurrentWriter runs")

// adoptHook runs before once, just before the first check-and-mutate of a
// Counted record: a writer's batch landing between the scan that found an
// entity uncounted and the adoption.
type adoptHook struct {
	store.Store
	before func()
	done   bool
}

func (h *adoptHook) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	if !h.done && bytes.Equal(cond.Qualifier, layout.QualCounted) {
		h.done = true
		h.before()
	}
	return h.Store.CheckAndMutate(ctx, table, cond, m)
}

// TestAdoptionRacedByWriter puts, between the scan that finds an order
// uncounted by daily_units and its adoption, the new schema's writer
// writing the order again with nothing to count (no items, or a delete).
// The adoption must see that and leave the order alone: adopted, the
// record would count the items of a state that is gone. The writer gives
// such an order an empty record, so the check on the record catches it.
func TestAdoptionRacedByWriter(t *testing.T) {
	ctx := context.Background()
	text := readFile(t, "../examples/orders.yaml")
	full, err := schema.Parse("orders.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	old, err := withoutTable("orders.yaml", text, "daily_units")
	if err != nil {
		t.Fatal(err)
	}
	order := func(v int64, items int) *event.Event {
		state := map[string]any{"orderId": "o1", "customerId": "c1", "placedAt": int64(1_760_000_000_000), "status": "OPEN", "totalCents": int64(100)}
		var list []map[string]any
		for i := range items {
			list = append(list, map[string]any{"line": int32(i + 1), "sku": fmt.Sprintf("s%d", i), "quantity": int64(2 + i)})
		}
		if list != nil {
			state["items"] = list
		}
		return &event.Event{ID: fmt.Sprintf("o1-%d", v), Entity: "order", Key: map[string]any{"orderId": "o1"}, Version: v, Op: event.Upsert, State: state}
	}
	gone := &event.Event{ID: "o1-2", Entity: "order", Key: map[string]any{"orderId": "o1"}, Version: 2, Op: event.Delete, Hints: map[string]any{"customerId": "c1", "placedAt": int64(1_760_000_000_000)}}
	for _, c := range []struct {
		name string
		next *event.Event
	}{{"no items", order(2, 0)}, {"deleted", gone}} {
		t.Run(c.name, func(t *testing.T) {
			want := openStore(t, full)
			apply(t, ctx, write.New(full, want, write.Options{}), []*event.Event{order(1, 2), c.next})

			raw := openStore(t, old)
			apply(t, ctx, write.New(old, raw, write.Options{}), []*event.Event{order(1, 2)})
			if _, err := ddl.Create(ctx, raw, full); err != nil {
				t.Fatal(err)
			}
			hook := &adoptHook{Store: raw, before: func() { apply(t, ctx, write.New(full, raw, write.Options{}), []*event.Event{c.next}) }}
			rep := run(t, ctx, full, hook, Options{})
			if !hook.done {
				t.Fatalf("no adoption was tried:\n%s", reportText(t, rep))
			}
			if c := rep.Kinds[KindCounter]; c.Missing != 2 || c.Failed != 1 || c.Fixed != 0 {
				t.Fatalf("the raced adoption: %+v, want 2 counts missing, the one adoption failed:\n%s", *c, reportText(t, rep))
			}
			if rep := run(t, ctx, full, raw, Options{}); rep.Failed() != 0 {
				t.Fatalf("the next repair failed:\n%s", reportText(t, rep))
			}
			if d := testenv.DiffLines(testenv.View(t, ctx, raw, full), testenv.View(t, ctx, want, full)); d != "" {
				t.Fatalf("the store differs from both events under the new schema (- got, + want):\n%s", d)
			}
			if rep := run(t, ctx, full, raw, Options{DryRun: true}); rep.Differences() != 0 {
				t.Fatalf("differences at the end:\n%s", reportText(t, rep))
			}
		})
	}
}

// TestBoundedMovedEntities repairs a drift in every row of the orders
// example's bounded counter, on stores where orders moved (a change of
// customerId or placedAt, which the locator follows). A moved order leaves
// its Counted record in each row it left, under the tombstone; only its
// newest record says what the totals hold of it, so the repair must leave
// the others out, or it sets the totals to counts the order no longer has.
func TestBoundedMovedEntities(t *testing.T) {
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
	moved := 0
	for h := range n {
		st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: func() int64 { return now }, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if movedHistory(t, plan, st, int64(20261207+h), now) > 0 {
			moved++
		}
		st.Close()
	}
	if n >= 60 && moved < n/10 {
		t.Errorf("only %d of %d histories left a record under a tombstone", moved, n)
	}
}

// movedHistory checks one history of TestBoundedMovedEntities on st and
// returns how many primary rows hold a record under a tombstone.
func movedHistory(t *testing.T, plan *schema.Plan, st store.Store, seed, now int64) int {
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, plan, testenv.HistoryOptions{Entities: 1 + r.Intn(4), Now: now}), testenv.EntityOf(plan))
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	w := write.New(plan, st, write.Options{Clock: func() int64 { return now }})
	for off := 0; off < len(evs); {
		end := min(off+1+r.Intn(6), len(evs))
		apply(t, ctx, w, evs[off:end])
		off = end
	}
	tombs := 0
	testenv.EachRow(t, ctx, st, "orders", func(row store.Row) {
		s, err := layout.ReadState(plan, plan.Entity("order"), plan.Primary("order"), row)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Exists() && s.Counted != nil && len(s.Counted.Counts) > 0 {
			tombs++
		}
	})
	want := testenv.View(t, ctx, st, plan)
	var rows [][]byte
	testenv.EachRow(t, ctx, st, "daily_units", func(row store.Row) { rows = append(rows, bytes.Clone(row.Key)) })
	for _, row := range rows {
		wrong := &layout.CounterState{}
		wrong.Add("c", []byte("u"), 5)
		setCells(t, ctx, st, row, map[string][]byte{string(layout.QualCounterState): layout.EncodeCounterState(wrong)})
	}
	if rep := run(t, ctx, plan, st, Options{WritersStopped: true}); rep.Failed() != 0 {
		t.Fatalf("seed %d: the repair failed:\n%s", seed, reportText(t, rep))
	}
	if d := testenv.DiffLines(testenv.View(t, ctx, st, plan), want); d != "" {
		t.Fatalf("seed %d: %d rows holding a moved or deleted order's counts; after drifts in %d counter rows and a repair, the store differs from the writer's (- got, + want):\n%s", seed, tombs, len(rows), d)
	}
	return tombs
}

// readFile is a file's bytes; it fails the test when it cannot read them.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
