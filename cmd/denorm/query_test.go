package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/denorm/denorm/gen"
)

type queryDoc struct {
	Rows         []map[string]any `json:"rows"`
	DroppedStale int              `json:"dropped_stale"`
	Repaired     int              `json:"repaired"`
	Next         string           `json:"next"`
}

// ordersCLI is a store holding an applied order stream.
func ordersCLI(t *testing.T) (*cli, string) {
	t.Helper()
	dir := t.TempDir()
	events := filepath.Join(dir, "orders.jsonl")
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: 1500, Seed: 4, Customers: 20}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	schema := filepath.Join("..", "..", "examples", "orders.yaml")
	c.ok("apply", "--schema", schema, "--events", events)
	return c, schema
}

func TestQueryCommand(t *testing.T) {
	c, schema := ordersCLI(t)
	var all queryDoc
	c.json(&all, "query", "--schema", schema, "recent_orders", "customerId=c000003", "--limit", "1000")
	if len(all.Rows) < 5 || all.Next != "" {
		t.Fatalf("%d rows, next %q", len(all.Rows), all.Next)
	}
	for i := 1; i < len(all.Rows); i++ {
		if all.Rows[i-1]["placedAt"].(float64) < all.Rows[i]["placedAt"].(float64) {
			t.Fatalf("rows %d and %d are not newest first", i-1, i)
		}
	}
	var paged []string
	next := ""
	for pages := 0; pages < 1000; pages++ {
		args := []string{"query", "--schema", schema, "recent_orders", "customerId=c000003", "--limit", "3"}
		if next != "" {
			args = append(args, "--next", next)
		}
		var doc queryDoc
		c.json(&doc, args...)
		for _, r := range doc.Rows {
			paged = append(paged, r["orderId"].(string))
		}
		if next = doc.Next; next == "" {
			break
		}
	}
	if len(paged) != len(all.Rows) {
		t.Fatalf("paged %d rows, one page %d", len(paged), len(all.Rows))
	}
	for i, r := range all.Rows {
		if r["orderId"] != paged[i] {
			t.Fatalf("row %d: paged %s, one page %s", i, paged[i], r["orderId"])
		}
	}

	first := all.Rows[0]
	text := c.ok("query", "--schema", schema, "open_order", "customerId=c000003", "orderId="+first["orderId"].(string),
		"placedAt="+strconv.FormatFloat(first["placedAt"].(float64), 'f', 0, 64))
	if !strings.Contains(text, first["orderId"].(string)) || !strings.Contains(text, "1 rows") {
		t.Fatalf("open_order text:\n%s", text)
	}
	var st queryDoc
	c.json(&st, "query", "--schema", schema, "orders_by_status", "status=SHIPPED", "--limit", "5")
	if len(st.Rows) != 5 || st.Next == "" || st.DroppedStale != 0 {
		t.Fatalf("orders_by_status: %+v", st)
	}

	for _, bad := range [][]string{
		{"query", "--schema", schema, "no_such_query"},
		{"query", "--schema", schema, "recent_orders"},
		{"query", "--schema", schema, "recent_orders", "customerId"},
		{"query", "--schema", schema, "recent_orders", "customerId=a", "status=OPEN"},
		{"query", "--schema", schema, "open_order", "customerId=a", "orderId=b", "placedAt=soon"},
		{"query", "--schema", schema, "recent_orders", "customerId=a", "--next", "garbage!"},
		{"query", "--schema", schema, "recent_orders", "customerId=a", "--format", "xml"},
		{"query", "recent_orders", "customerId=a"},
	} {
		c.fails(2, bad...)
	}
}
