package schema

import (
	"fmt"
	"strings"
	"testing"
)

// refString names where a FieldRef places a value, as the path it resolves.
func refString(e *Entity, r FieldRef) string {
	switch {
	case r.Slot < 0:
		return "-"
	case r.Child == nil:
		return e.Fields[r.Slot].Name
	default:
		return r.Child.Name + "." + r.Child.Fields[r.Slot].Name
	}
}

func TestSlotsOfTheExamples(t *testing.T) {
	p := loadExample(t, "orders.yaml")
	order := p.Entity("order")
	sku := p.Table("orders_by_sku")
	var parts []string
	for i, refs := range sku.KeyRefs {
		var fs []string
		for _, r := range refs {
			fs = append(fs, refString(order, r))
		}
		parts = append(parts, fmt.Sprintf("%d:%s", i, strings.Join(fs, "+")))
	}
	if got, want := strings.Join(parts, " "), "0:items.sku 1:placedAt 2:orderId 3:items.line"; got != want {
		t.Errorf("orders_by_sku key refs %s, want %s", got, want)
	}
	for _, c := range sku.Columns {
		if got := refString(order, c.Slot); c.Field != "" && got != c.Field {
			t.Errorf("orders_by_sku column %s: slot of %s, want %s", c.Name(), got, c.Field)
		}
	}
	for _, a := range p.Table("daily_units").Counter.Adds {
		if got := refString(order, a.Slot); got != a.Field {
			t.Errorf("daily_units adds %s from slot %s", a.Field, got)
		}
	}
	if got := p.Table("orders_by_status").WhenRef.Slot; got != -1 {
		t.Errorf("a table without when has when slot %d", got)
	}
	dp := loadExample(t, "device_events.yaml")
	for _, tb := range dp.Tables {
		if tb.When == "" {
			continue
		}
		if got := refString(dp.Entity(tb.Entity), tb.WhenRef); got != tb.When {
			t.Errorf("%s: when %s resolved to %s", tb.Name, tb.When, got)
		}
	}
}

func TestEntityRef(t *testing.T) {
	order := loadExample(t, "orders.yaml").Entity("order")
	for path, want := range map[string]string{
		"status":         "status",
		"items.quantity": "items.quantity",
		"items":          "-", // a child list is no field
		"nope":           "-",
		"items.nope":     "-",
		"nolist.sku":     "-",
	} {
		if got := refString(order, order.Ref(path)); got != want {
			t.Errorf("Ref(%q) = %s, want %s", path, got, want)
		}
	}
}
