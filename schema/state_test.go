package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func decodeJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNormalizeState(t *testing.T) {
	p := loadExample(t, "orders.yaml")
	order := p.Entity("order")
	st, err := order.Normalize(decodeJSON(t, `{"orderId": "o1", "customerId": "c4", "status": "OPEN",
		"placedAt": "2025-11-30T00:00:00Z", "totalCents": 1250,
		"items": [{"line": 2, "sku": "s2", "quantity": 1, "name": "B", "priceCents": 250},
		          {"line": 1, "sku": "s1", "quantity": 2, "name": "A", "priceCents": 500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if st["placedAt"] != int64(1764460800000) || st["totalCents"] != int64(1250) {
		t.Errorf("normalized = %v", st)
	}
	els := st.Elements(order, "items")
	if len(els) != 2 || els[0]["items.line"] != int32(1) || els[0]["customerId"] != "c4" {
		t.Fatalf("elements = %v", els)
	}
	// The values are what the tables' keys need.
	if _, err := p.Table("orders").Key.Encode(st.Values(order)); err != nil {
		t.Error(err)
	}
	if _, err := p.Table("orders_by_sku").Key.Encode(els[1]); err != nil {
		t.Error(err)
	}

	bad := map[string]string{
		"unknown field":  `{"orderId": "o1", "colour": "red"}`,
		"missing key":    `{"status": "OPEN"}`,
		"wrong type":     `{"orderId": "o1", "totalCents": "lots"}`,
		"fraction":       `{"orderId": "o1", "totalCents": 1.5}`,
		"items not list": `{"orderId": "o1", "items": {"line": 1}}`,
		"element key":    `{"orderId": "o1", "items": [{"sku": "s"}]}`,
		"repeated line":  `{"orderId": "o1", "items": [{"line": 1}, {"line": 1}]}`,
		"element field":  `{"orderId": "o1", "items": [{"line": 1, "colour": "x"}]}`,
	}
	for name, doc := range bad {
		if _, err := order.Normalize(decodeJSON(t, doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var items []string
	for i := 0; i <= 200; i++ {
		items = append(items, fmt.Sprintf(`{"line": %d}`, i))
	}
	long := `{"orderId": "o1", "items": [` + strings.Join(items, ", ") + `]}`
	if _, err := order.Normalize(decodeJSON(t, long)); err == nil || !strings.Contains(err.Error(), "max 200") {
		t.Errorf("201 items: err = %v", err)
	}
}

// FuzzNormalize feeds arbitrary JSON to Entity.Normalize: no panic, and a
// state it accepts carries the entity key and every element its child key.
func FuzzNormalize(f *testing.F) {
	p, err := Load("../examples/orders.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"orderId": "o1", "customerId": "c4", "status": "OPEN", "placedAt": 5, "totalCents": 1, "items": [{"line": 1, "sku": "s"}]}`))
	f.Add([]byte(`{"orderId": "", "items": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(string(data)))
		d.UseNumber()
		if d.Decode(&m) != nil {
			return
		}
		order := p.Entity("order")
		st, err := order.Normalize(m)
		if err != nil {
			return
		}
		vals := st.Values(order)
		for _, k := range order.Key {
			if _, ok := vals[k]; !ok {
				t.Fatalf("accepted state lacks key %s", k)
			}
		}
		for _, el := range st.Elements(order, "items") {
			if _, ok := el["items.line"]; !ok {
				t.Fatalf("element without its key: %v", el)
			}
		}
	})
}
