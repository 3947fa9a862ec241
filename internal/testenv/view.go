package testenv

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// EffectiveLive returns the live-copy qualifiers the entity in a primary row
// still references (nil when the entity is deleted): copies of references it
// dropped stay in the row unrefreshed, and readers ignore them.
func EffectiveLive(t testing.TB, p *schema.Plan, tbl *schema.Table, row store.Row) map[string]bool {
	ent := p.Entity(tbl.Entity)
	st, err := layout.ReadState(p, ent, tbl, row)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Exists() {
		return nil
	}
	refs, err := layout.LiveRefs(p, ent, st.Values)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, lr := range refs {
		for _, from := range lr.From {
			out[string(layout.LiveQualifier(lr.Ref, lr.Key, from))] = true
		}
	}
	return out
}

// LocatedAlive returns the location qualifiers of a locator row whose
// primary rows hold a live entity.
func LocatedAlive(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan, lt *schema.Table, row store.Row) [][]byte {
	at, _ := layout.ReadLocation(lt, row)
	prim := p.Primary(lt.Entity)
	var out [][]byte
	for _, x := range at {
		r, err := st.Get(ctx, prim.Name, store.Get{Row: x.Key})
		if err != nil {
			t.Fatal(err)
		}
		s, err := layout.ReadState(p, p.Entity(lt.Entity), prim, r)
		if err != nil {
			t.Fatal(err)
		}
		if s.Exists() {
			out = append(out, layout.LocationQualifier(x.Key))
		}
	}
	return out
}

// View is what two stores that applied one log must agree on, however
// the log came and whatever repaired them: what a reader sees. Every
// visible cell without its timestamp (a repair writes at the entity's
// version, where the writer may have left an unchanged copy at the
// version that first wrote it); of a primary row,
// nothing of a deleted entity and neither the writer's bookkeeping (it
// records the order events came in) nor the live copies of references the
// entity dropped; of a locator, the locations of live entities; and of a
// bounded counter, its totals rather than its cells, which also hold each
// log stream's sequence.
func View(t *testing.T, ctx context.Context, st store.Store, p *schema.Plan) []string {
	t.Helper()
	var out []string
	for _, tbl := range p.Tables {
		EachRow(t, ctx, st, tbl.Name, func(row store.Row) {
			line := func(fam string, q []byte, v string) {
				out = append(out, fmt.Sprintf("%s %s %s:%s = %s", tbl.Name, store.Printable(row.Key), fam, store.Printable(q), v))
			}
			switch {
			case tbl.Role == schema.RoleLocator:
				for _, q := range LocatedAlive(t, ctx, st, p, tbl, row) {
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
			var dataAt int64 // a primary row's data cells below it belong to no state
			if tbl.Role == schema.RolePrimary {
				if live = EffectiveLive(t, p, tbl, row); live == nil {
					return
				}
				for _, c := range row.Cells {
					if !layout.IsBookkeeping(c.Qualifier) && !layout.IsLive(c.Qualifier) {
						dataAt = max(dataAt, c.Timestamp)
					}
				}
			}
			for _, c := range row.Cells {
				if tbl.Role == schema.RolePrimary && (layout.IsBookkeeping(c.Qualifier) || layout.IsLive(c.Qualifier) && !live[string(c.Qualifier)] ||
					!layout.IsLive(c.Qualifier) && c.Timestamp < dataAt) {
					continue
				}
				line(c.Family, c.Qualifier, store.Printable(c.Value))
			}
		})
	}
	sort.Strings(out)
	return out
}

// DiffLines lists the lines of a not in b ("- ") and of b not in a ("+ "),
// the first 20 of them.
func DiffLines(a, b []string) string {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, x := range a {
		if !mb[x] {
			out = append(out, "- "+x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			out = append(out, "+ "+x)
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}
