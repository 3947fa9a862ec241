package write

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/denorm/denorm/event"
)

// Bounded counters count each stream's events once by their positions, and
// the writer tells a write it may not have finished by the position of the
// event that made it (docs/writer.md, "unfinished writes"). Events that
// come from no log (Apply called directly, Stream empty) get positions
// from a lane: a stream of the writer's own, named at random,
// used by one Apply at a time, its offsets growing from one Apply to the
// next. A lane whose Apply failed is retired, never used again: the retry
// of that batch (maybe cut otherwise) runs on another lane, and what the
// failed attempt recorded under the old one stays consistent, since that
// stream's sequences never move again (docs/writer.md, "streams"). So a
// counter row holds one sequence per lane a writer used: per process and
// failure, and per Apply running at once. Events read through write.Run
// carry their log's positions and use no lane.
type lanes struct {
	mu   sync.Mutex
	id   string // random, per writer
	n    int    // lanes made
	free []*lane
}

type lane struct {
	stream string
	next   int64 // the offset of the next Apply's first event
}

// take returns a lane for one Apply.
func (l *lanes) take() (*lane, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		ln := l.free[n-1]
		l.free = l.free[:n-1]
		return ln, nil
	}
	if l.id == "" {
		b := make([]byte, 8)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("write: name the writer's counter stream: %w", err)
		}
		l.id = hex.EncodeToString(b)
	}
	l.n++
	return &lane{stream: fmt.Sprintf("writer:%s/%d", l.id, l.n)}, nil
}

// done gives a lane back after an Apply of n events: for the next Apply
// when it succeeded, retired when it failed.
func (l *lanes) done(ln *lane, n int, ok bool) {
	if ln == nil || !ok {
		return
	}
	ln.next += int64(n)
	l.mu.Lock()
	l.free = append(l.free, ln)
	l.mu.Unlock()
}

// needsLane reports whether a batch has an event that carries no log
// position.
func (w *Writer) needsLane(evs []*event.Event) bool {
	for _, ev := range evs {
		if ev.Stream == "" {
			return true
		}
	}
	return false
}
