package event

import (
	"strings"
	"testing"
)

// BenchmarkDecode decodes one order event of three items: the per-event
// cost of every log the writer reads.
func BenchmarkDecode(b *testing.B) {
	p := ordersPlan(b)
	line := []byte(strings.ReplaceAll(`{"id":"e1","entity":"order","key":"o-1","version":3,"op":"upsert",
"state":{"orderId":"o-1","customerId":"c-9","status":"PAID","placedAt":"2026-10-04T10:00:00Z","totalCents":1234,
"items":[{"line":1,"sku":"s-1","quantity":2,"name":"Widget","priceCents":617},
{"line":2,"sku":"s-2","quantity":1,"name":"Gadget","priceCents":1999},
{"line":3,"sku":"s-3","quantity":5,"name":"Gizmo \"x\"","priceCents":45}]},"hints":{"status":"OPEN"}}`, "\n", ""))
	// Decode takes the line in one pass; the full decoder (encoding/json),
	// which Decode leaves the lines it does not take to, is the baseline.
	for _, c := range []struct {
		name   string
		decode func() (*Event, error)
	}{
		{"one-pass", func() (*Event, error) { return Decode(p, line) }},
		{"encoding-json", func() (*Event, error) { return decodeFull(p, line) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := c.decode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
