package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// Scan reads a forward scan's first fetch in one call (getScannerResults),
// which opens, reads and closes a scanner on the gateway: a scan of fewer
// rows than a fetch, as most reads of an index page or a key's lookup rows
// are, costs one round trip instead of three or four. A scan with more
// rows goes on with a server-side scanner from the row after the last one
// read. Reverse scans, and scans in pieces (Batch), whose rows the next
// fetch could cut mid-row, open a server-side scanner at once. Gateway
// scanners live in the Thrift server, not in a connection, so each fetch
// may use any pooled connection.
func (s *Store) Scan(ctx context.Context, table string, sc store.Scan) (store.Scanner, error) {
	if !sc.Reverse && sc.Batch == 0 {
		return s.scanFirst(ctx, table, sc)
	}
	out, err := s.openScanner(ctx, table, sc)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanFirst is Scan's one-call first fetch.
func (s *Store) scanFirst(ctx context.Context, table string, sc store.Scan) (store.Scanner, error) {
	fetch := fetchSize(sc)
	var res []store.Row
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		args := hbase2.THBaseServiceGetScannerResultsArgs{Table: s.wireName(table), Tscan: tscan(sc), NumRows: int32(fetch)}
		res, err = callRows(ctx, c, "getScannerResults", &args, &results{})
		return err
	})
	if err != nil {
		return nil, s.explain(ctx, "scan "+table, table, nil, err)
	}
	out := &scanner{s: s, table: table, fetch: int32(fetch), limit: sc.Limit, buf: res}
	// Fewer rows than asked for: the gateway's scanner ran out (it reads
	// until it has them all or the range ends). As many: there may be
	// more, unless the limit is reached.
	if len(res) == fetch && (sc.Limit == 0 || len(res) < sc.Limit) {
		rest := sc
		out.rest = &rest
	}
	return out, nil
}

// openScanner opens a server-side scanner for sc.
func (s *Store) openScanner(ctx context.Context, table string, sc store.Scan) (*scanner, error) {
	var id int32
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		id, err = c.OpenScanner(ctx, s.wireName(table), tscan(sc))
		return err
	})
	if err != nil {
		return nil, s.explain(ctx, "open a scanner on "+table, table, nil, err)
	}
	return &scanner{s: s, table: table, id: id, open: true, fetch: int32(fetchSize(sc)), limit: sc.Limit, pieces: sc.Batch > 0}, nil
}

// scanner walks a gateway scanner. It closes the server-side scanner as
// soon as it is exhausted, fails or reaches its limit, and on Close.
type scanner struct {
	s      *Store
	table  string
	id     int32
	open   bool // the server-side scanner still exists
	fetch  int32
	limit  int  // rows; 0 means none
	pieces bool // Scan.Batch is set: a row may continue in the next fetch

	buf []store.Row
	// rest, when set, is the scan to go on with once buf is read: a first
	// fetch made in one call (scanFirst) filled buf, and a server-side
	// scanner is to read on from the row after its last.
	rest *store.Scan
	row  store.Row
	rows int // distinct row keys returned so far
	last []byte
	done bool
	err  error
}

func (sc *scanner) Next(ctx context.Context) bool {
	if sc.done {
		return false
	}
	if len(sc.buf) == 0 {
		// Whole rows and the limit reached: the server's scanner is done
		// too, and asking it for more only costs a round trip.
		if sc.limit > 0 && sc.rows >= sc.limit && !sc.pieces {
			sc.finish()
			return false
		}
		if !sc.open && sc.rest == nil {
			// A first fetch that held every row, and no server-side
			// scanner: nothing more to read.
			sc.finish()
			return false
		}
		if sc.rest != nil {
			if err := sc.resume(ctx); err != nil {
				sc.fail(err)
				return false
			}
		}
		if err := sc.more(ctx); err != nil {
			sc.fail(err)
			return false
		}
		if len(sc.buf) == 0 {
			sc.finish()
			return false
		}
	}
	r := sc.buf[0]
	sc.buf = sc.buf[1:]
	// With Scan.Batch, one row arrives in several pieces sharing its key;
	// the limit counts rows, not pieces.
	if sc.rows == 0 || !bytes.Equal(r.Key, sc.last) {
		if sc.limit > 0 && sc.rows == sc.limit {
			sc.finish()
			return false
		}
		sc.rows++
		sc.last = r.Key
	}
	if n := rowSize(r); n > sc.s.opts.MaxRowSize {
		sc.fail(fmt.Errorf("hbase: scan %s: row of %d bytes: %w", sc.table, n,
			&store.RowTooBigError{Table: sc.table, Row: r.Key, Limit: sc.s.opts.MaxRowSize}))
		return false
	}
	sc.row = r
	return true
}

// resume opens the server-side scanner that reads on after a first fetch
// made in one call: from the row after the last one it returned (the
// smallest key above it is the key with a zero byte appended), for the
// rows of the limit still to come.
func (sc *scanner) resume(ctx context.Context) error {
	rest := *sc.rest
	sc.rest = nil
	rest.Start = append(append([]byte(nil), sc.last...), 0)
	if rest.Limit > 0 {
		rest.Limit -= sc.rows
	}
	next, err := sc.s.openScanner(ctx, sc.table, rest)
	if err != nil {
		return err
	}
	sc.id, sc.open, sc.fetch = next.id, true, next.fetch
	return nil
}

func (sc *scanner) more(ctx context.Context) error {
	var res []store.Row
	err := sc.s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		args := hbase2.THBaseServiceGetScannerRowsArgs{ScannerId: sc.id, NumRows: sc.fetch}
		res, err = callRows(ctx, c, "getScannerRows", &args, &results{wantIA: true})
		return err
	})
	if err != nil {
		var iae *hbase2.TIllegalArgument
		if errors.As(err, &iae) {
			// The gateway forgets a scanner left idle longer than
			// hbase.client.scanner.timeout.period (60 s by default).
			sc.open = false
			return fmt.Errorf("hbase: scan %s: the gateway no longer knows scanner %d (idle past its lease?): %w", sc.table, sc.id, err)
		}
		return sc.s.explain(ctx, "scan "+sc.table, sc.table, sc.last, err)
	}
	sc.buf = res
	return nil
}

func (sc *scanner) fail(err error) {
	sc.err = err
	sc.finish()
}

// finish ends the scan and frees the server-side scanner. A failure to
// close is kept as the scan's error only if nothing went wrong before.
func (sc *scanner) finish() {
	sc.done = true
	sc.buf, sc.row = nil, store.Row{}
	if err := sc.release(); err != nil && sc.err == nil {
		sc.err = err
	}
}

func (sc *scanner) release() error {
	if !sc.open {
		return nil
	}
	sc.open = false
	// Close has no context, and the caller's may be gone: freeing the
	// server's scanner gets the store's own call timeout.
	err := sc.s.pool.do(context.Background(), true, sc.s.opts.Timeout, func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
		return c.CloseScanner(ctx, sc.id)
	})
	if err != nil {
		var iae *hbase2.TIllegalArgument
		if errors.As(err, &iae) || errors.Is(err, store.ErrClosed) {
			// The server already dropped it (its lease expired), or the
			// store is closed and the server will expire it.
			return nil
		}
		return fmt.Errorf("hbase: close scanner %d on %s: %w", sc.id, sc.table, err)
	}
	return nil
}

func (sc *scanner) Row() store.Row { return sc.row }

func (sc *scanner) Err() error { return sc.err }

func (sc *scanner) Close() error {
	if sc.done {
		return nil
	}
	sc.done = true
	sc.buf, sc.row = nil, store.Row{}
	return sc.release()
}
