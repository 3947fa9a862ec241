package pebble

import (
	"context"
	"fmt"
	"testing"

	"github.com/denorm/denorm/store"
)

// BenchmarkGetColumnOfWideRow reads one column of a row with 10,000 (a
// counter row with a contribution per entity), against a Get of the whole
// row: a read that seeks to its column does not grow with the row.
func BenchmarkGetColumnOfWideRow(b *testing.B) {
	ctx := context.Background()
	st := openBenchStore(b)
	if err := st.CreateTable(ctx, store.TableSpec{Name: "wide", Families: []store.FamilySpec{{Name: "c"}}}); err != nil {
		b.Fatal(err)
	}
	const cols = 10000
	var ms []store.Mutation
	for i := 0; i < cols; i++ {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: "c", Qualifier: []byte(fmt.Sprintf("u\x00o%08d", i)), Timestamp: 1, Value: make([]byte, 8)})
	}
	if err := st.Mutate(ctx, "wide", store.RowMutation{Row: []byte("sku-1"), Mutations: ms}); err != nil {
		b.Fatal(err)
	}
	one := store.Get{Row: []byte("sku-1"), Columns: []store.Column{{Family: "c", Qualifier: []byte(fmt.Sprintf("u\x00o%08d", cols/2))}}}
	b.Run("one column", func(b *testing.B) {
		for b.Loop() {
			row, err := st.Get(ctx, "wide", one)
			if err != nil || len(row.Cells) != 1 {
				b.Fatalf("%d cells, %v", len(row.Cells), err)
			}
		}
	})
	b.Run("whole row", func(b *testing.B) {
		for b.Loop() {
			row, err := st.Get(ctx, "wide", store.Get{Row: []byte("sku-1")})
			if err != nil || len(row.Cells) != cols {
				b.Fatalf("%d cells, %v", len(row.Cells), err)
			}
		}
	})
}
