package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// Scan opens a scanner on one Pebble iterator, which is a consistent
// point-in-time view: a row mutation committed during the scan is seen whole
// or not at all.
func (s *Store) Scan(ctx context.Context, name string, sc store.Scan) (store.Scanner, error) {
	t, err := s.begin(ctx, "scan", name)
	if err != nil {
		return nil, err
	}
	defer s.leave()
	q, err := newQuery(t, sc.Columns, sc.MaxVersions, sc.TimeRange, maxRowSize(t, s.opts.MaxRowSize))
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	lo, hi := tableBounds(t.id)
	if !sc.Reverse {
		if len(sc.Start) > 0 {
			lo = appendRowPrefix(nil, t.id, sc.Start)
		}
		if len(sc.Stop) > 0 {
			hi = appendRowPrefix(nil, t.id, sc.Stop)
		}
	} else {
		// HBase's reverse scan: Start is the inclusive upper row, Stop the
		// exclusive lower one.
		if len(sc.Start) > 0 {
			hi = prefixEnd(appendRowPrefix(nil, t.id, sc.Start))
		}
		if len(sc.Stop) > 0 {
			lo = prefixEnd(appendRowPrefix(nil, t.id, sc.Stop))
		}
	}
	// A forward scan checks its upper bound itself, once per row: Pebble
	// would compare every key with it.
	io := &pdb.IterOptions{LowerBound: lo, UpperBound: hi}
	if !sc.Reverse {
		io = &pdb.IterOptions{LowerBound: lo}
	}
	it, err := s.db.NewIter(io)
	if err != nil {
		return nil, fmt.Errorf("scan table %q: %w", name, err)
	}
	rr := newRowReader(t, q, s.now())
	rr.reuse = true
	out := &scanner{s: s, t: t, it: it, rr: rr, reverse: sc.Reverse, limit: sc.Limit, batch: sc.Batch, hi: hi}
	if !sc.Reverse && len(sc.Stop) == 0 {
		out.table = appendTablePrefix(nil, t.id)
	}
	s.scannersMu.Lock()
	s.scanners[out] = struct{}{}
	s.scannersMu.Unlock()
	return out, nil
}

type scanner struct {
	s       *Store
	t       *table
	rr      *rowReader
	reverse bool
	limit   int
	batch   int

	mu      sync.Mutex // guards it against Close racing the store's Close
	it      *pdb.Iterator
	started bool
	rows    int
	whole   store.Row // the current row, handed out in pieces of batch cells
	off     int
	cur     store.Row
	err     error
	done    bool
	prefix  []byte
	hi      []byte // exclusive upper bound of a forward scan
	// table is the table's prefix when hi is the table's end (a forward
	// scan without Stop): every key starting with it sorts below hi.
	table []byte
}

func (sc *scanner) Next(ctx context.Context) bool {
	// Only the scanner's lock is taken, not the store's life lock as other
	// calls do: the store's Close releases every open scanner under this
	// lock before it closes the database, so the iterator is never used
	// past it, and a Next after it finds the store closed. Two atomic
	// operations fewer per row. One defer and one return keep the defer
	// open-coded: Next runs once per row.
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var entered error
	if sc.s.closed.Load() {
		entered = store.ErrClosed
	}
	return sc.next(ctx, entered)
}

// next is Next under the locks.
func (sc *scanner) next(ctx context.Context, entered error) bool {
	if sc.err != nil || sc.done {
		return false
	}
	if entered != nil {
		sc.err = entered
		return false
	}
	if sc.it == nil {
		if sc.err == nil {
			sc.err = store.ErrClosed
		}
		return false
	}
	if sc.off < len(sc.whole.Cells) {
		return sc.piece()
	}
	for {
		if err := ctx.Err(); err != nil {
			sc.err = err
			return false
		}
		if sc.limit > 0 && sc.rows >= sc.limit {
			sc.done = true
			return false
		}
		// The row is read into sc.whole in place: a Row passed up by value
		// through each call is copied at each.
		ok, err := sc.nextRow()
		if err != nil {
			sc.err = fmt.Errorf("scan table %q: %w", sc.t.spec.Name, err)
			return false
		}
		if !ok {
			sc.done = true
			return false
		}
		if len(sc.whole.Cells) == 0 {
			continue
		}
		sc.rows++
		sc.t.regions.read(sc.whole.Key)
		if sc.batch <= 0 {
			// The whole row at once: piece, without its tests.
			n := len(sc.whole.Cells)
			sc.cur.Key, sc.cur.Cells = sc.whole.Key, sc.whole.Cells[:n:n]
			sc.off = n
			return true
		}
		sc.off = 0
		return sc.piece()
	}
}

// piece hands out the next Batch-sized part of the current row.
func (sc *scanner) piece() bool {
	n := len(sc.whole.Cells) - sc.off
	if sc.batch > 0 && n > sc.batch {
		n = sc.batch
	}
	sc.cur = store.Row{Key: sc.whole.Key, Cells: sc.whole.Cells[sc.off : sc.off+n : sc.off+n]}
	sc.off += n
	return true
}

// nextRow reads the next row in scan order, visible cells or not, into
// sc.whole.
func (sc *scanner) nextRow() (bool, error) {
	it := sc.it
	if !sc.reverse {
		if !sc.started {
			sc.started = true
			it.First()
		}
		if !it.Valid() {
			return false, it.Error()
		}
		// Every key of a row sorts below hi when its first key does: hi is
		// a row prefix (or a table prefix), never inside a row. A key of
		// the table sorts below the table's end, the bound of a scan
		// without Stop: one word and a byte instead of bytes.Compare.
		if key := it.Key(); !(sc.table != nil && len(key) >= tablePfx && key[0] == sc.table[0] &&
			binary.BigEndian.Uint64(key[1:tablePfx]) == binary.BigEndian.Uint64(sc.table[1:tablePfx])) &&
			bytes.Compare(key, sc.hi) >= 0 {
			return false, nil
		}
		return true, sc.rr.readInto(it, &sc.whole)
	}
	if !sc.started {
		sc.started = true
		it.Last()
	}
	if !it.Valid() {
		return false, it.Error()
	}
	// Stepping backwards lands on a row's last key: go to its first key,
	// read the row forwards, then continue before it.
	prefix, err := splitRowPrefix(it.Key())
	if err != nil {
		return false, err
	}
	sc.prefix = append(sc.prefix[:0], prefix...)
	if !it.SeekGE(sc.prefix) {
		return false, fmt.Errorf("row vanished from its own snapshot: %w", it.Error())
	}
	if err := sc.rr.readInto(it, &sc.whole); err != nil {
		return false, err
	}
	it.SeekLT(sc.prefix)
	return true, nil
}

func (sc *scanner) Row() store.Row { return sc.cur }

func (sc *scanner) Err() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.err
}

func (sc *scanner) Close() error {
	sc.s.scannersMu.Lock()
	if sc.s.scanners != nil {
		delete(sc.s.scanners, sc)
	}
	sc.s.scannersMu.Unlock()
	return sc.release(nil)
}

// release closes the iterator once; reason, if set, becomes the scan's error.
func (sc *scanner) release(reason error) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.it == nil {
		return nil
	}
	err := sc.it.Close()
	sc.it = nil
	if reason != nil && sc.err == nil && !sc.done {
		sc.err = reason
	}
	if err != nil {
		return fmt.Errorf("close scanner: %w", err)
	}
	return nil
}
