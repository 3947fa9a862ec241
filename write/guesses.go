package write

import "sync"

// Counter rows the writer last saw (bounded counters). A batch whose every
// share of a counter row is known without the row (see boundedShares)
// needs the row's state cell only as the condition of its check-and-mutate,
// and the value the writer last wrote or read there is the likeliest one:
// each stream has one writer, and a row is mostly counted in by one stream.
// A guess is never trusted for anything else. A wrong one fails the
// check-and-mutate, and the row is then read and written as before, with
// the same deltas, which did not depend on it.
//
// The set is bounded (guessLimit rows): its memory does not grow with the
// counter tables. A row past the bound is read as before.
type guesses struct {
	mu   sync.Mutex
	rows map[string]guess // boundedKey
}

// guess is a counter row's state cell as last written or read: its value
// (nil: the row had none) and timestamp.
type guess struct {
	raw []byte
	ts  int64
}

// guessLimit bounds the rows kept: about 200 bytes each for rows of a few
// streams, so a few MiB at most.
const guessLimit = 1 << 14

func (g *guesses) get(key string) (guess, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.rows[key]
	return v, ok
}

// put keeps raw (owned by the caller from now on: not copied) as the row's
// state cell. When the set is full an arbitrary row makes room (Go's map
// iteration order): which rows stay is a matter of speed only.
func (g *guesses) put(key string, raw []byte, ts int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rows == nil {
		g.rows = map[string]guess{}
	}
	if _, ok := g.rows[key]; !ok && len(g.rows) >= guessLimit {
		for k := range g.rows {
			delete(g.rows, k)
			break
		}
	}
	g.rows[key] = guess{raw: raw, ts: ts}
}

// forget drops a row whose state is not known.
func (g *guesses) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.rows, key)
}
