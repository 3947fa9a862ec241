package layout

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// The rows a derive finds through slots are the rows the key specs encode
// from the state by name (every top-level value, and an element's under its
// path): for every index and lookup table, on random orders, absent
// optional fields included.
func TestSlotKeysMatchNames(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, plan := range []*schema.Plan{ordersPlan(t), exactPlan(t)} {
		ent := plan.Entity("order")
		var sc Scratch
		for n := 0; n < 500; n++ {
			st := randomOrder(r, n)
			d, err := sc.Derive(plan, ent, st)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, it := range d.Items {
				if role := plan.Table(it.Table).Role; role == schema.RoleIndex || role == schema.RoleLookup {
					got = append(got, it.Table+" "+string(it.Row))
				}
			}
			for _, tb := range plan.Tables {
				if !tb.HoldsCopiesOf(ent.Name) || (tb.Role != schema.RoleIndex && tb.Role != schema.RoleLookup) {
					continue
				}
				var each []rowkey.Values
				if tb.Each == "" {
					each = []rowkey.Values{rowkey.Values(st)}
				}
				elems, _ := st[tb.Each].([]map[string]any)
				for _, el := range elems {
					vals := rowkey.Values{}
					for k, v := range st {
						vals[k] = v
					}
					for k, v := range el {
						vals[tb.Each+"."+k] = v
					}
					each = append(each, vals)
				}
				for _, vals := range each {
					if tb.When != "" && !schema.Set(vals[tb.When]) {
						continue
					}
					key, err := tb.Key.Encode(vals)
					if err != nil {
						t.Fatalf("%s: %v", tb.Name, err)
					}
					want = append(want, tb.Name+" "+string(key))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			want = slices.Compact(want)
			if !slices.Equal(got, want) {
				t.Fatalf("order %v:\nrows through slots %q\nby name %q", st, got, want)
			}
		}
	}
}

// A field the state lacks and a field it holds as null are told apart as
// the specs tell them apart by name: "no value" for the one, the part's
// own complaint for the other.
func TestSlotsAbsentAndNull(t *testing.T) {
	plan := ordersPlan(t)
	ent := plan.Entity("order")
	prim := plan.Primary("order")
	for _, null := range []bool{false, true} {
		st := randomOrder(rand.New(rand.NewSource(1)), 1)
		delete(st, "customerId")
		if null {
			st["customerId"] = nil
		}
		_, byName := prim.Key.Encode(rowkey.Values(st))
		_, err := Derive(plan, ent, st)
		if err == nil || byName == nil || !strings.Contains(err.Error(), byName.Error()) {
			t.Errorf("null %v: derive says %v, the spec by name %v", null, err, byName)
		}
	}
	// An element without its SKU: the index by SKU names the path.
	st := randomOrder(rand.New(rand.NewSource(1)), 1)
	st["items"] = []map[string]any{{"line": int32(1), "quantity": int64(2)}}
	if _, err := Derive(plan, ent, st); err == nil || !strings.Contains(err.Error(), `no value for "items.sku"`) {
		t.Errorf("an element without sku: %v", err)
	}
}

// A plan whose tables were not resolved by schema.Parse is refused with a
// reason, not read out of range.
func TestSlotsUnresolvedPlan(t *testing.T) {
	plan := ordersPlan(t)
	plan.Table("orders_by_status").KeyRefs = nil
	_, err := Derive(plan, plan.Entity("order"), randomOrder(rand.New(rand.NewSource(2)), 2))
	if err == nil || !strings.Contains(err.Error(), "orders_by_status") || !strings.Contains(err.Error(), "not resolved") {
		t.Errorf("derive with an unresolved key: %v", err)
	}
}
