package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/denorm/denorm/store"
)

// metered wraps the store a run reads: it counts the rows read per table
// (scanned, and got), which the report carries so that a test and an operator
// can see what a run cost, and it paces reads to a rate, so that a full
// scan on a serving cluster stays polite.
type metered struct {
	store.Store
	lim   *limiter
	mu    sync.Mutex
	reads map[string]*atomic.Int64 // rows scanned
	gets  map[string]*atomic.Int64 // rows got
}

func newMetered(st store.Store, rate float64) *metered {
	return &metered{Store: st, lim: newLimiter(rate), reads: map[string]*atomic.Int64{}, gets: map[string]*atomic.Int64{}}
}

func (m *metered) counter(set map[string]*atomic.Int64, table string) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := set[table]
	if c == nil {
		c = &atomic.Int64{}
		set[table] = c
	}
	return c
}

func (m *metered) load(set map[string]*atomic.Int64) map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int64, len(set))
	for t, c := range set {
		out[t] = c.Load()
	}
	return out
}

// Reads is the rows scanned so far, per table.
func (m *metered) Reads() map[string]int64 { return m.load(m.reads) }

// Gets is the rows read with a Get so far, per table.
func (m *metered) Gets() map[string]int64 { return m.load(m.gets) }

func (m *metered) Get(ctx context.Context, table string, g store.Get) (store.Row, error) {
	if err := m.lim.wait(ctx, 1); err != nil {
		return store.Row{}, err
	}
	m.counter(m.gets, table).Add(1)
	return m.Store.Get(ctx, table, g)
}

// GetMany reads rows in one multi-get of the store underneath, where it
// has one, and counts them as got.
func (m *metered) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	if err := m.lim.wait(ctx, len(gets)); err != nil {
		return nil, err
	}
	m.counter(m.gets, table).Add(int64(len(gets)))
	return store.GetMany(ctx, m.Store, table, gets)
}

func (m *metered) Scan(ctx context.Context, table string, s store.Scan) (store.Scanner, error) {
	sc, err := m.Store.Scan(ctx, table, s)
	if err != nil {
		return nil, err
	}
	return &meteredScanner{Scanner: sc, m: m, n: m.counter(m.reads, table)}, nil
}

type meteredScanner struct {
	store.Scanner
	m       *metered
	n       *atomic.Int64
	pending int
	err     error
	last    []byte
}

// meterBatch is how many rows a scanner counts and waits for at once.
const meterBatch = 64

func (s *meteredScanner) Next(ctx context.Context) bool {
	if s.err != nil || !s.Scanner.Next(ctx) {
		// Pay for the rows of the last batch too: many short scans must
		// not slip under the rate.
		if s.pending > 0 && s.err == nil {
			s.err = s.m.lim.wait(ctx, s.pending)
		}
		s.flush()
		return false
	}
	// Pieces of one wide row (Scan.Batch) count once.
	if k := s.Scanner.Row().Key; s.last == nil || string(k) != string(s.last) {
		s.last = append(s.last[:0], k...)
		if s.pending++; s.pending == meterBatch {
			if s.err = s.m.lim.wait(ctx, s.pending); s.err != nil {
				return false
			}
			s.flush()
		}
	}
	return true
}

func (s *meteredScanner) flush() {
	s.n.Add(int64(s.pending))
	s.pending = 0
}

func (s *meteredScanner) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.Scanner.Err()
}

// limiter is a token bucket of rows per second, shared by a process's
// goroutines; a nil limiter does not wait.
type limiter struct {
	mu   sync.Mutex
	rate float64
	next time.Time // when the rows taken so far are paid for
}

func newLimiter(rate float64) *limiter {
	if rate <= 0 {
		return nil
	}
	return &limiter{rate: rate}
}

// wait blocks until n more rows fit the rate. The bucket holds up to a
// second of rows, so a pause does not make the next second a burst.
func (l *limiter) wait(ctx context.Context, n int) error {
	if l == nil {
		return ctx.Err()
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now.Add(-time.Second)) {
		l.next = now.Add(-time.Second)
	}
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	d := l.next.Sub(now)
	l.mu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
