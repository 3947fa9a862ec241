package layout

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/denorm/denorm/schema"
)

// A Scratch derives what Derive, DeriveCopies and DeriveTable derive, state after
// state, though each derive overwrites the buffers of the one before; and
// what it returned stays right until the next call.
func TestScratchDerivesTheSame(t *testing.T) {
	for _, p := range []*schema.Plan{ordersPlan(t), exactPlan(t)} {
		ent := p.Entity("order")
		r := rand.New(rand.NewSource(11))
		var sc Scratch
		for i := 0; i < 2000; i++ {
			st := randomOrder(r, i)
			want, err := DeriveCopies(p, ent, st)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sc.DeriveCopies(p, ent, st)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nilIfEmptyDerived(want), nilIfEmptyDerived(got)) {
				t.Fatalf("state %v:\nDeriveCopies %+v\nScratch      %+v", st, want, got)
			}
			if want, err = Derive(p, ent, st); err != nil {
				t.Fatal(err)
			}
			if got, err = sc.Derive(p, ent, st); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nilIfEmptyDerived(want), nilIfEmptyDerived(got)) {
				t.Fatalf("state %v:\nDerive  %+v\nScratch %+v", st, want, got)
			}
			tab := p.Tables[r.Intn(len(p.Tables))]
			if tab.Entity != ent.Name {
				continue
			}
			want, err = DeriveTable(p, ent, tab, st)
			if err != nil {
				t.Fatal(err)
			}
			if got, err = sc.DeriveTable(p, ent, tab, st); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nilIfEmptyDerived(want), nilIfEmptyDerived(got)) {
				t.Fatalf("state %v, table %s:\nDeriveTable %+v\nScratch     %+v", st, tab.Name, want, got)
			}
		}
	}
}

// nilIfEmptyDerived makes empty lists nil: a Scratch keeps its (empty)
// buffers where a fresh derive has none.
func nilIfEmptyDerived(d *Derived) *Derived {
	c := *d
	c.Items = nilIfEmpty(c.Items)
	c.Increments = nilIfEmpty(c.Increments)
	return &c
}
