package layout

import (
	"math/rand"
	"testing"
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
}
