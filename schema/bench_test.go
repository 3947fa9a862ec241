package schema

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkParseOrders(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "orders.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("orders.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
