package pebble

import (
	"context"
	"math/rand"
	"testing"

	"github.com/denorm/denorm/store"
)

// BenchmarkGetMany reads pages of 100 rows spread over a table of 100,000
// (a thin read's page of primary rows, a writer batch's stored states), one
// multi-get a page: its allocations are the rows' arrays.
func BenchmarkGetMany(b *testing.B) {
	const rows, page = 100_000, 100
	ctx := context.Background()
	st := openBenchStore(b)
	loadSettled(b, st, rows, benchValue(1))
	rng := rand.New(rand.NewSource(1))
	pages := make([][]store.Get, 64)
	for p := range pages {
		for range page {
			pages[p] = append(pages[p], store.Get{Row: benchRow(rng.Intn(rows))})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		got, err := st.GetMany(ctx, "t", pages[i%len(pages)])
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range got {
			if len(r.Cells) != benchCellsRow {
				b.Fatalf("row %s: %d cells, want %d", r.Key, len(r.Cells), benchCellsRow)
			}
		}
	}
}
