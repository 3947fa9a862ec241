package layout

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
)

// BenchmarkDerive derives the copies of random orders (1 to 10 items
// each): the per-entity cost the writer and the reconcile job pay.
func BenchmarkDerive(b *testing.B) {
	p := ordersPlan(b)
	ent := p.Entity("order")
	r := rand.New(rand.NewSource(1))
	states := make([]map[string]any, 256)
	for i := range states {
		states[i] = randomOrder(r, i)
	}
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := Derive(p, ent, states[i%len(states)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copies", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := DeriveCopies(p, ent, states[i%len(states)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copies-scratch", func(b *testing.B) {
		b.ReportAllocs()
		var sc Scratch
		for i := 0; b.Loop(); i++ {
			if _, err := sc.DeriveCopies(p, ent, states[i%len(states)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadState rebuilds random orders from primary rows as the
// writer stores them (fields, items, the pending refs and a bounded
// counter's record): the per-row cost of every reader of primary rows.
func BenchmarkReadState(b *testing.B) {
	p := ordersPlan(b)
	ent := p.Entity("order")
	prim := p.Primary("order")
	r := rand.New(rand.NewSource(1))
	rows := make([]store.Row, 256)
	for i := range rows {
		d, err := Derive(p, ent, randomOrder(r, i))
		if err != nil {
			b.Fatal(err)
		}
		row := store.Row{Key: d.PrimaryKey}
		add := func(fam string, q, v []byte) {
			row.Cells = append(row.Cells, store.Cell{Row: d.PrimaryKey, Family: fam, Qualifier: q, Timestamp: 9, Value: v})
		}
		book := BookFamily(prim)
		counted := &Counted{Stream: 1, Offset: int64(i)}
		for _, in := range d.Increments {
			counted.Counts = append(counted.Counts, Count{Ref: Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}, Now: in.Delta})
		}
		add(book, QualPending, EncodeRefs(d.Refs()))
		add(book, QualCounted, EncodeCounted(counted))
		for _, c := range d.Primary {
			add(c.Family, c.Qualifier, c.Value)
		}
		slices.SortFunc(row.Cells, func(x, y store.Cell) int {
			if c := strings.Compare(x.Family, y.Family); c != 0 {
				return c
			}
			return bytes.Compare(x.Qualifier, y.Qualifier)
		})
		rows[i] = row
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := ReadState(p, ent, prim, rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
}
