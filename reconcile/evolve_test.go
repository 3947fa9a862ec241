package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// TestSchemaEvolution holds reconcile to what a team adding a table to a
// running schema relies on: the log's first part applied under the old
// schema, the new table created, one repair, and the rest of the log
// applied under the new schema must leave the store the whole log applied
// under the new schema leaves. A table nothing fills is the one case the
// other tests cannot make: every other copy was written by a writer that
// knew of it, so the bookkeeping in the primary rows (what a bounded
// counter counted, which live copies a row holds) always matched the
// tables. Every derived table of each schema is left out in turn; the
// rest of the log then exercises the writer on rows whose bookkeeping
// the repair wrote, or did not.
func TestSchemaEvolution(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets, err := os.ReadFile("../write/testdata/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bounded := strings.ReplaceAll(string(tickets), "mode: exact", "mode: bounded")
	device, err := os.ReadFile("../examples/device_events.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orders, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 40
	if raceEnabled {
		n = 4
	}
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
		for _, tbl := range full.Tables {
			if tbl.Role == schema.RolePrimary || tbl.Role == schema.RoleLocator {
				continue // locators: reconcile/locator_test.go
			}
			t.Run(src.name+"/"+tbl.Name, func(t *testing.T) {
				old, err := withoutTable(src.name, []byte(src.text), tbl.Name)
				if err != nil {
					t.Skipf("the schema without %s: %v", tbl.Name, err)
				}
				for h := range n {
					evolveHistory(t, old, full, tbl.Name, int64(20261207+h), now, false)
				}
			})
		}
	}
}

// evolveHistory checks one history of TestSchemaEvolution, with the store
// that evolves on the test HBase if onHBase. The stores it is compared
// with are embedded; with HBase's clock running, every clock is the wall
// clock and no version comes near a TTL.
func evolveHistory(t *testing.T, old, full *schema.Plan, added string, seed, now int64, onHBase bool) {
	ctx := context.Background()
	clock := func() int64 { return now }
	if onHBase {
		clock = func() int64 { return time.Now().UnixMilli() }
	}
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, full, testenv.HistoryOptions{Entities: 1 + r.Intn(4), Now: now, WallClock: onHBase}), testenv.EntityOf(full))
	cut := r.Intn(len(evs) + 1)
	open := func() store.Store {
		st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: clock, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
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
	if onHBase {
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
	dry := run(t, ctx, full, got, Options{DryRun: true, Clock: clock})
	rep := run(t, ctx, full, got, Options{PurgeMarkers: true, Clock: clock})
	if (dry.Differences() == 0) != (rep.Differences() == 0) {
		t.Fatalf("%s seed %d: %s added after %d of %d events; a dry run found %d differences, the repair %d:\n%s", full.Name, seed, added, cut, len(evs), dry.Differences(), rep.Differences(), reportText(t, dry))
	}
	if rep.Failed() != 0 {
		t.Fatalf("%s seed %d: %s added after %d of %d events; the repair failed %d:\n%s", full.Name, seed, added, cut, len(evs), rep.Failed(), reportText(t, rep))
	}
	// What the first repair adopted into records the second adds to the
	// totals (adopt.go says why not the first).
	if rep := run(t, ctx, full, got, Options{PurgeMarkers: true, Clock: clock}); rep.Failed() != 0 || rep.Kinds[KindCounter].Missing != 0 {
		t.Fatalf("%s seed %d: %s added after %d of %d events; the second repair failed %d, found %d counts to adopt:\n%s", full.Name, seed, added, cut, len(evs), rep.Failed(), rep.Kinds[KindCounter].Missing, reportText(t, rep))
	}
	if rep := run(t, ctx, full, got, Options{DryRun: true, Clock: clock}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: %s added after %d of %d events; differences after the repair:\n%s", full.Name, seed, added, cut, len(evs), reportText(t, rep))
	}
	// Right after the repair, before later events could mend anything, the
	// store must be what the first part of the log makes under the new
	// schema: except for live copies, whose source the old schema kept
	// nowhere.
	if full.Table(added).Role != schema.RoleLookup {
		mid := open()
		create(mid, full)
		applyAll(write.New(full, mid, write.Options{Clock: clock}), evs[:cut])
		if d := diffLines(evolvedView(t, ctx, got, full), evolvedView(t, ctx, mid, full)); d != "" {
			t.Fatalf("%s seed %d: %s added after %d of %d events and repaired; the store differs from that part of the log applied under the new schema (- got, + want):\n%s", full.Name, seed, added, cut, len(evs), d)
		}
	}
	// A live copy's source lives in its lookup table's reference rows
	// only, so added with its lookup table it is filled by replaying the
	// log from its start (docs/reconcile.md); anything else from where the
	// old schema's writer stopped.
	rest := evs[cut:]
	if full.Table(added).Role == schema.RoleLookup {
		rest = evs
	}
	applyAll(write.New(full, got, write.Options{Clock: clock}), rest)

	a, b := evolvedView(t, ctx, got, full), evolvedView(t, ctx, want, full)
	if d := diffLines(a, b); d != "" {
		t.Fatalf("%s seed %d: %s added after %d of %d events, repaired, the rest applied; the store differs from the log applied under the new schema (- got, + want):\n%s", full.Name, seed, added, cut, len(evs), d)
	}
	if rep := run(t, ctx, full, got, Options{DryRun: true, Clock: clock}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: %s added after %d of %d events; differences at the end:\n%s", full.Name, seed, added, cut, len(evs), reportText(t, rep))
	}
}

// evolvedView is what two stores of TestSchemaEvolution must agree on:
// what a reader sees. Every visible cell without its timestamp (a repair
// writes at the entity's version, where the writer may have left an
// unchanged copy at the version that first wrote it); of a primary row,
// nothing of a deleted entity and neither the writer's bookkeeping (it
// records the order events came in) nor the live copies of references the
// entity dropped; of a locator, the locations of live entities; and of a
// bounded counter, its totals rather than its cells, which also hold each
// log stream's sequence.
func evolvedView(t *testing.T, ctx context.Context, st store.Store, p *schema.Plan) []string {
	t.Helper()
	var out []string
	for _, tbl := range p.Tables {
		eachRow(t, ctx, st, tbl.Name, func(row store.Row) {
			line := func(fam string, q []byte, v string) {
				out = append(out, fmt.Sprintf("%s %s %s:%s = %s", tbl.Name, store.Printable(row.Key), fam, store.Printable(q), v))
			}
			switch {
			case tbl.Role == schema.RoleLocator:
				for _, q := range testenv.LocatedAlive(t, ctx, st, p, tbl, row) {
					line(layout.BookFamily(tbl), q, "")
				}
				return
			case tbl.Counter.Bounded():
				cc, err := layout.ReadCounterCells(row, layout.CounterStateFamily(tbl))
				if err != nil {
					t.Fatal(err)
				}
				cs := cc.Merged()
				for _, a := range tbl.Counter.Adds {
					if v := cs.Total(a.Family, []byte(a.Qualifier)); v != 0 {
						line(a.Family, []byte(a.Qualifier), fmt.Sprintf("total %d", v))
					}
				}
				return
			}
			var live map[string]bool
			if tbl.Role == schema.RolePrimary {
				if live = testenv.EffectiveLive(t, p, tbl, row); live == nil {
					return
				}
			}
			for _, c := range row.Cells {
				if tbl.Role == schema.RolePrimary && (layout.IsBookkeeping(c.Qualifier) || layout.IsLive(c.Qualifier) && !live[string(c.Qualifier)]) {
					continue
				}
				line(c.Family, c.Qualifier, store.Printable(c.Value))
			}
		})
	}
	sort.Strings(out)
	return out
}

// withoutTable is the schema text with table name left out, and every
// query of it. Leaving out a lookup table leaves out the live copies it
// serves (a live copy needs one): the team adds both at once.
func withoutTable(file string, text []byte, name string) (*schema.Plan, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
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
	dropKeys(root, "queries", func(_ string, v *yaml.Node) bool {
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == "table" && v.Content[i+1].Value == name {
				return true
			}
		}
		return false
	})
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return schema.Parse(file, out)
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
	text, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
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
	seeds := 6
	if testing.Short() || raceEnabled {
		seeds = 2
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			hist := orderHistories(r, 40)
			var first []*event.Event
			for _, evs := range hist {
				first = append(first, evs[0])
			}
			rest := laterEvents(r, hist)

			want := openStore(t, full)
			apply(t, ctx, write.New(full, want, write.Options{}), first)
			apply(t, ctx, write.New(full, want, write.Options{}), rest)

			got := openStore(t, old)
			apply(t, ctx, write.New(old, got, write.Options{}), first)
			if _, err := ddl.Create(ctx, got, full); err != nil {
				t.Fatal(err)
			}
			w := write.New(full, got, write.Options{})
			done := make(chan struct{})
			var runs int
			var missing int64
			var repErr error
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					rep, err := Run(ctx, full, got, Options{})
					if err != nil {
						repErr = err
						return
					}
					runs++
					missing += rep.Kinds[KindCounter].Missing
					select {
					case <-done:
						return
					default:
					}
				}
			})
			for len(rest) > 0 {
				n := min(len(rest), 1+r.Intn(4))
				apply(t, ctx, w, rest[:n])
				rest = rest[n:]
			}
			close(done)
			wg.Wait()
			if repErr != nil {
				t.Fatal(repErr)
			}
			if missing == 0 {
				t.Fatalf("%d repair runs adopted nothing: the test raced nothing", runs)
			}
			// A run beside the writer may add what a writer that read the
			// record before an adoption added too (adopt.go); the first
			// run after the writer stops must leave the totals exact, so
			// the records must be right whatever the runs raced.
			if rep := run(t, ctx, full, got, Options{}); rep.Failed() != 0 {
				t.Fatalf("the repair after the writer stopped failed:\n%s", reportText(t, rep))
			}
			if d := diffLines(evolvedView(t, ctx, got, full), evolvedView(t, ctx, want, full)); d != "" {
				t.Fatalf("after %d repair runs beside the writer (%d counts adopted), the store differs from the log under the new schema (- got, + want):\n%s", runs, missing, d)
			}
			if rep := run(t, ctx, full, got, Options{DryRun: true}); rep.Differences() != 0 {
				t.Fatalf("differences at the end:\n%s", reportText(t, rep))
			}
			t.Logf("%d repair runs, %d counts adopted", runs, missing)
		})
	}
}

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
	text, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
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
			if d := diffLines(evolvedView(t, ctx, raw, full), evolvedView(t, ctx, want, full)); d != "" {
				t.Fatalf("the store differs from both events under the new schema (- got, + want):\n%s", d)
			}
			if rep := run(t, ctx, full, raw, Options{DryRun: true}); rep.Differences() != 0 {
				t.Fatalf("differences at the end:\n%s", reportText(t, rep))
			}
		})
	}
}
