package layout

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/denorm/denorm/schema"
)

// DeriveTable gives, for each table, exactly the items and increments that
// DeriveCopies lists for it.
func TestDeriveTableIsDeriveCopiesOfOneTable(t *testing.T) {
	p := ordersPlan(t)
	ent := p.Entity("order")
	r := rand.New(rand.NewSource(11))
	seen := map[string]bool{}
	for i := 0; i < 300; i++ {
		st := randomOrder(r, i)
		all, err := DeriveCopies(p, ent, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range p.TablesOf(ent.Name) {
			if tb.Role == schema.RolePrimary {
				continue
			}
			one, err := DeriveTable(p, ent, tb, st)
			if err != nil {
				t.Fatal(err)
			}
			var items []Item
			for _, it := range all.Items {
				if it.Table == tb.Name {
					items = append(items, it)
				}
			}
			var incs []Increment
			for _, in := range all.Increments {
				if in.Table == tb.Name {
					incs = append(incs, in)
				}
			}
			if len(items) > 0 || len(incs) > 0 {
				seen[tb.Name] = true
			}
			if !reflect.DeepEqual(nilIfEmpty(one.Items), items) || !reflect.DeepEqual(nilIfEmpty(one.Increments), incs) {
				t.Fatalf("state %v, table %s:\nDeriveTable  %+v %+v\nDeriveCopies %+v %+v", st, tb.Name, one.Items, one.Increments, items, incs)
			}
			if one.PrimaryKey == nil || string(one.PrimaryKey) != string(all.PrimaryKey) {
				t.Fatalf("table %s: primary key %q, want %q", tb.Name, one.PrimaryKey, all.PrimaryKey)
			}
		}
	}
	if len(seen) < 3 {
		t.Fatalf("only %d tables derived anything: %v", len(seen), seen)
	}
}

func nilIfEmpty[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return xs
}
