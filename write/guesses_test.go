package write

import (
	"fmt"
	"testing"
)

// TestGuessesBounded: the counter rows' states last seen stay within
// guessLimit rows however many rows a writer counts in (their memory does
// not grow with the counter tables), the row just kept is always there,
// and a forgotten row is gone.
func TestGuessesBounded(t *testing.T) {
	var g guesses
	for i := 0; i < guessLimit+5000; i++ {
		key := fmt.Sprintf("daily_units\x00row-%d", i)
		g.put(key, []byte{byte(i)}, int64(i))
		if v, ok := g.get(key); !ok || v.ts != int64(i) {
			t.Fatalf("row %d: kept %v, %v; want its state", i, v, ok)
		}
	}
	if n := len(g.rows); n != guessLimit {
		t.Fatalf("%d rows kept, want the bound %d", n, guessLimit)
	}
	last := fmt.Sprintf("daily_units\x00row-%d", guessLimit+4999)
	g.put(last, nil, 1) // a row seen again replaces its state, evicting nothing
	if n := len(g.rows); n != guessLimit {
		t.Fatalf("%d rows kept after a row was seen again, want %d", n, guessLimit)
	}
	g.forget(last)
	if _, ok := g.get(last); ok {
		t.Fatal("a forgotten row is still kept")
	}
}
