package layout

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Child keys whose encoding starts with 0x00 or 0x01 (int32 keys below
// -2^24 do) cannot collide with the writer's bookkeeping and live-copy
// cells, even when the template column shares their family and has no
// prefix: the qualifier is escaped, reads back to the same element, and
// keeps the elements' order.
func TestTemplateQualifiersNeverCollide(t *testing.T) {
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), `"i:{line}": items`, `"d:{line}": items`, 1)
	plan, err := schema.Parse("orders-one-family.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	ent := plan.Entity("order")
	prim := plan.Primary("order")
	lines := []int32{math.MinInt32, math.MinInt32 + 1, -1<<24 - 1, -1 << 24, -(1<<31 - 3<<24), -1, 0, 7}
	var items []map[string]any
	for _, l := range lines {
		items = append(items, map[string]any{"line": l, "sku": "s", "quantity": int64(1)})
	}
	state := map[string]any{"orderId": "o1", "customerId": "c1", "status": "OPEN", "placedAt": int64(1000), "items": items}
	d, err := Derive(plan, ent, state)
	if err != nil {
		t.Fatal(err)
	}
	var row store.Row
	row.Key = d.PrimaryKey
	var prev []byte
	for _, c := range d.Primary {
		if c.Family == BookFamily(prim) && (IsBookkeeping(c.Qualifier) || IsLive(c.Qualifier)) {
			t.Fatalf("schema qualifier %s reads as the writer's own cell", store.Printable(c.Qualifier))
		}
		if c.Family == "d" && len(c.Qualifier) > 1 {
			if prev != nil && string(prev) >= string(c.Qualifier) {
				t.Fatalf("qualifiers out of key order: %s then %s", store.Printable(prev), store.Printable(c.Qualifier))
			}
			prev = c.Qualifier
		}
		row.Cells = append(row.Cells, store.Cell{Family: c.Family, Qualifier: c.Qualifier, Timestamp: 1, Value: c.Value})
	}
	st, err := ReadState(plan, ent, prim, row)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Values["items"].([]map[string]any)
	if len(got) != len(lines) {
		t.Fatalf("read back %d items, want %d", len(got), len(lines))
	}
	seen := map[int32]bool{}
	for _, el := range got {
		seen[el["line"].(int32)] = true
	}
	for _, l := range lines {
		if !seen[l] {
			t.Fatalf("item with line %d did not read back", l)
		}
	}
}

// A schema qualifier in the writer's range is refused where it is written.
func TestSchemaQualifierInTheWritersRange(t *testing.T) {
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), `d:s: status`, `"d:\x01s": status`, 1)
	_, err = schema.Parse("bad.yaml", []byte(y))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:") || !strings.Contains(err.Error(), "the writer's own") {
		t.Fatalf("err = %v, want a load error at the column", err)
	}
}
