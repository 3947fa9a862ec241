package testenv

import (
	"context"
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
