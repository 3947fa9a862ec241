package pebble

import "testing"

// A slab array holds the rows still to read at the last row's size, up to
// its limit, and always at least one row however big.
func TestSlabCap(t *testing.T) {
	for _, c := range []struct{ per, rows, limit, want int }{
		{256, 1, 16 << 10, 256},
		{256, 0, 16 << 10, 256},
		{256, 10, 16 << 10, 2560},
		{256, 64, 16 << 10, 16 << 10},
		{256, 1000, 16 << 10, 16 << 10},
		{40 << 10, 3, 16 << 10, 40 << 10},
		{8, 100, 256, 256},
	} {
		if got := slabCap(c.per, c.rows, c.limit); got != c.want {
			t.Errorf("slabCap(%d, %d, %d) = %d, want %d", c.per, c.rows, c.limit, got, c.want)
		}
	}
}
