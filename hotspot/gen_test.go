package hotspot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The zipf draw follows 1/(k+1)^s closely enough that the most popular id
// takes about its share, and the rank-to-id map is a bijection.
func TestZipf(t *testing.T) {
	for _, c := range []struct {
		n int64
		s float64
	}{{1000, 1.1}, {1000, 0.9}, {1000, 1}, {7, 2}, {1, 1.5}} {
		z := newZipf(c.n, c.s)
		seen := map[int64]bool{}
		for k := range c.n {
			lo := int64(uint64(k) * z.mult % uint64(c.n)) // small n: no overflow
			if seen[lo] {
				t.Fatalf("n=%d: rank %d maps to an id already taken", c.n, k)
			}
			seen[lo] = true
		}
		r := rand.New(rand.NewPCG(1, 2))
		counts := map[int64]int{}
		const draws = 200000
		for range draws {
			v := z.draw(r)
			if v < 0 || v >= c.n {
				t.Fatalf("n=%d: drew %d", c.n, v)
			}
			counts[v]++
		}
		// The expected share of rank 0 under the continuous model.
		var want float64
		if c.s == 1 {
			want = math.Log(2) / math.Log(float64(c.n)+1)
		} else {
			want = (math.Pow(2, 1-c.s) - 1) / (math.Pow(float64(c.n)+1, 1-c.s) - 1)
		}
		top := 0
		for _, n := range counts {
			top = max(top, n)
		}
		got := float64(top) / draws
		if math.Abs(got-want) > 0.01+4*math.Sqrt(want*(1-want)/draws) {
			t.Errorf("n=%d s=%v: top id has share %.4f, want %.4f", c.n, c.s, got, want)
		}
	}
}
