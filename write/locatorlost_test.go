package write

import (
	"context"
	"math/rand"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// TestLocatorLostThenReconciled widens the model with what the writer
// cannot produce itself: a locator that lost rows (a table restored from
// an older snapshot, primary rows written before the schema had a
// locator). The writer takes an entity with an empty locator row for one
// never written and reads none of its primary rows, so it is reconcile's
// job to put such a store right: a history is applied up to a random
// point, in log order or shuffled with duplicates, a random share of the
// locator's rows is dropped, a dry run must report exactly the primary
// rows the locator no longer covers, a repair must fix them all, and the
// rest of the log must then end in the model's state. A delete that only a
// dropped locator row held (its entity was never written) is gone for good
// (docs/reconcile.md, "Locators"): the model then leaves out what came of
// that entity before the loss. The same histories without the repair must
// end wrong at least once, or the test could not tell.
func TestLocatorLostThenReconciled(t *testing.T) {
	ctx := context.Background()
	seed := int64(20261203)
	n := historyCount() / 5
	f := newFixture(t)
	loc := f.plan.Locator("order")
	wrong, forgot := 0, 0
	for h := 0; h < n; h++ {
		r := rand.New(rand.NewSource(seed + int64(h)))
		evs := historyOf(r, 1+r.Intn(4), "", false)
		want, _ := model(t, f.plan, evs)
		log := interleave(r, evs)
		if r.Intn(2) == 0 {
			log = withDuplicates(r, append([]*event.Event(nil), evs...), evs)
		}
		cut := r.Intn(len(log) + 1)
		keep := r.Float64() // the share of locator rows that survive
		for _, repair := range []bool{true, false} {
			f.reset(t, ctx)
			sizes := rand.New(rand.NewSource(int64(h)))
			w := New(f.plan, withSyncOf(f.ns, f.st), Options{})
			run(t, ctx, w, log[:cut], sizes)
			lost := lose(t, ctx, f, loc, rand.New(rand.NewSource(int64(h))), keep)
			want := want
			if len(lost) > 0 {
				// A delete only a lost locator row held is gone for good:
				// its entity ends as the rest of the log alone makes it.
				want, _ = model(t, f.plan, forgetting(t, loc, evs, log[cut:], lost))
				forgot++
			}
			if repair {
				uncovered := uncoveredRows(t, ctx, f.ns, f.plan)
				dry, err := reconcile.Run(ctx, f.plan, f.ns, reconcile.Options{DryRun: true})
				if err != nil {
					t.Fatal(err)
				}
				if got := locatorCounts(dry).Missing; got != uncovered {
					t.Fatalf("history %d: dry run found %d rows the locator does not cover, want %d", h, got, uncovered)
				}
				fix, err := reconcile.Run(ctx, f.plan, f.ns, reconcile.Options{})
				if err != nil {
					t.Fatal(err)
				}
				// Two tombstone rows of one entity under an empty locator
				// row may be checked one after the other's repair: then
				// only the first is missing.
				lc := locatorCounts(fix)
				if fix.After() != 0 || fix.Failed() != 0 || lc.Fixed != lc.Missing || lc.Missing > uncovered || (uncovered > 0) != (lc.Missing > 0) {
					t.Fatalf("history %d: repair left %d differences, %d failed, fixed %d locator rows of %d missing, %d uncovered", h, fix.After(), fix.Failed(), lc.Fixed, lc.Missing, uncovered)
				}
				if u := uncoveredRows(t, ctx, f.ns, f.plan); u != 0 {
					t.Fatalf("history %d: %d rows uncovered after the repair", h, u)
				}
			}
			run(t, ctx, New(f.plan, withSyncOf(f.ns, f.st), Options{}), log[cut:], sizes)
			d := readAll(t, ctx, f.ns, f.plan).diff(want)
			switch {
			case repair && d != "":
				t.Fatalf("history %d (seed %d), locator rows lost after event %d of %d and repaired: store differs from the model:\n%s", h, seed+int64(h), cut, len(log), d)
			case !repair && d != "":
				wrong++
			}
		}
	}
	t.Logf("%d histories; without the repair, %d ended wrong; %d runs lost a delete only the locator held", n, wrong, forgot)
	if wrong == 0 {
		t.Errorf("no history ended wrong without the repair: the test cannot see a lost locator")
	}
}

// lose drops the locator table and restores each of its rows with
// probability keep, cells and timestamps as they were. It returns the keys
// of the rows it dropped that held a delete and listed no primary row: the
// delete of an entity never written (its delete came first, with no hint),
// which only its locator row records, so that no repair can bring it back.
func lose(t testing.TB, ctx context.Context, f *fixture, loc *schema.Table, r *rand.Rand, keep float64) (lostDeletes map[string]bool) {
	t.Helper()
	lostDeletes = map[string]bool{}
	var kept []store.RowMutation
	eachRow(t, ctx, f.ns, loc.Name, func(row store.Row) {
		if r.Float64() >= keep {
			if at, tomb := layout.ReadLocation(loc, row); tomb > 0 && len(at) == 0 {
				lostDeletes[string(row.Key)] = true
			}
			return
		}
		m := store.RowMutation{Row: append([]byte(nil), row.Key...)}
		for _, c := range row.Cells {
			m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: c.Family,
				Qualifier: append([]byte(nil), c.Qualifier...), Timestamp: c.Timestamp, Value: append([]byte(nil), c.Value...)})
		}
		kept = append(kept, m)
	})
	if err := f.ns.DropTable(ctx, loc.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := ddl.Create(ctx, f.ns, f.plan); err != nil {
		t.Fatal(err)
	}
	for _, m := range kept {
		if err := f.ns.Mutate(ctx, loc.Name, m); err != nil {
			t.Fatal(err)
		}
	}
	return lostDeletes
}

// forgetting is evs with the events of the entities whose locator rows are
// among lost left out, but for those in rest: what the writer knows of
// such an entity once its locator row is gone. Only a delete, and events
// older than it (stale, so never written), came before rest: had a newer
// version been written, the row would list its primary row.
func forgetting(t testing.TB, loc *schema.Table, evs, rest []*event.Event, lost map[string]bool) []*event.Event {
	t.Helper()
	locRow := func(e *event.Event) string {
		k, err := loc.Key.Encode(e.Key)
		if err != nil {
			t.Fatal(err)
		}
		return string(k)
	}
	inRest := map[*event.Event]bool{}
	for _, e := range rest {
		inRest[e] = true
	}
	var out []*event.Event
	for _, e := range evs {
		if e.Entity == loc.Entity && lost[locRow(e)] && !inRest[e] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// uncoveredRows counts the primary rows holding a state that their
// locator row does not cover: a live one not listed, a tombstone under an
// empty locator row.
func uncoveredRows(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan) int64 {
	t.Helper()
	prim, loc, ent := p.Primary("order"), p.Locator("order"), p.Entity("order")
	var n int64
	eachRow(t, ctx, st, prim.Name, func(row store.Row) {
		s, err := layout.ReadState(p, ent, prim, row)
		if err != nil {
			t.Fatal(err)
		}
		if s.Version == 0 {
			return
		}
		lk, err := layout.LocatorRow(prim, loc, row.Key)
		if err != nil {
			t.Fatal(err)
		}
		lr, err := st.Get(ctx, loc.Name, store.Get{Row: lk})
		if err != nil {
			t.Fatal(err)
		}
		at, tomb := layout.ReadLocation(loc, lr)
		covered := len(at) > 0 || tomb > 0
		if s.Exists() {
			covered = false
			for _, x := range at {
				covered = covered || string(x.Key) == string(row.Key)
			}
		}
		if !covered {
			n++
		}
	})
	return n
}

func locatorCounts(rep *reconcile.Report) reconcile.Counts {
	if c := rep.Kinds[reconcile.KindLocator]; c != nil {
		return *c
	}
	return reconcile.Counts{}
}
