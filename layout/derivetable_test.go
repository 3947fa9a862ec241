package layout

import (
	"fmt"
	"maps"
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

// DerivesRow is true exactly for the rows DeriveTable lists: checked with
// the rows of every state against every other state (each row key is a
// candidate for all of them), so that misses are tested as often as hits.
// Orders have an index per element of a child list; readings one that
// holds only the readings with an alert.
func TestDerivesRowIsDeriveTableMembership(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	var orders, readings, twins []map[string]any
	for i := 0; i < 200; i++ {
		orders = append(orders, randomOrder(r, i))
		rd := map[string]any{"deviceId": fmt.Sprintf("dev%03d", r.Intn(20)), "ts": int64(1_700_000_000_000 + r.Intn(1_000_000_000))}
		switch r.Intn(3) {
		case 0:
			rd["alert"] = "overheat"
		case 1:
			rd["alert"] = nil
		}
		readings = append(readings, rd)
		// Its twin with an alert: its row key is a candidate for the
		// reading too, which must not derive it unless it has an alert.
		twin := maps.Clone(rd)
		twin["alert"] = "low battery"
		twins = append(twins, twin)
	}
	devices, err := schema.Load("../examples/device_events.yaml")
	if err != nil {
		t.Fatal(err)
	}
	derivesRowMembership(t, ordersPlan(t), "order", orders, nil)
	derivesRowMembership(t, devices, "reading", readings, twins)
}

// derivesRowMembership checks DerivesRow for states against the rows any
// of states and candidates derives.
func derivesRowMembership(t *testing.T, p *schema.Plan, entity string, states, candidates []map[string]any) {
	ent := p.Entity(entity)
	var sc Scratch
	checked, hits := 0, 0
	for _, tb := range p.TablesOf(ent.Name) {
		if tb.Role != schema.RoleIndex && tb.Role != schema.RoleLookup {
			continue
		}
		rows := map[string]bool{}
		derived := make([]map[string]bool, len(states))
		for i, st := range states {
			d, err := DeriveTable(p, ent, tb, st)
			if err != nil {
				t.Fatal(err)
			}
			derived[i] = map[string]bool{}
			for _, it := range d.Items {
				if it.Table == tb.Name && it.Family == "" {
					derived[i][string(it.Row)] = true
					rows[string(it.Row)] = true
				}
			}
		}
		for _, st := range candidates {
			d, err := DeriveTable(p, ent, tb, st)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range d.Items {
				rows[string(it.Row)] = true
			}
		}
		rows["not a row key"] = true
		for i, st := range states {
			for row := range rows {
				got, err := sc.DerivesRow(p, ent, tb, st, []byte(row))
				if err != nil {
					t.Fatal(err)
				}
				if got != derived[i][row] {
					t.Fatalf("table %s, state %v, row %q: DerivesRow %v, DeriveTable lists it: %v", tb.Name, st, row, got, derived[i][row])
				}
				checked++
				if got {
					hits++
				}
			}
		}
	}
	if hits < len(states)/5 || checked-hits < len(states) {
		t.Fatalf("%s: %d checks, %d of them hits: too few of one kind to tell", entity, checked, hits)
	}
}
