package read

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/store"
)

// openCursors opens a cursor on each range the token has not finished and
// reads its first item, into cursors[i] for ranges[i]; each is a copy of
// proto with its scanner. A query over a salted key has a range per
// bucket, and the merge needs every bucket's head before it can return a
// row, so on a store whose calls are round trips the ranges are opened at
// once: on HBase each first read is a getScannerResults call, and eight of
// them one after another were most of a page's time. On the embedded store
// they are opened in turn: the goroutines made a covering read of eight
// buckets slower (docs/BENCHMARKS.md). A cursor opened before an error is
// left in cursors for the caller to close with the rest.
func (r *Reader) openCursors(ctx context.Context, qq *query, ranges []rowkey.Range, tok token, caching int, proto cursor, cursors []*cursor) error {
	scans := make([]store.Scan, len(ranges))
	open := 0
	for i, rg := range ranges {
		if tok.Done[i] {
			continue
		}
		start := rg.Start
		if last := tok.Last[i]; last != nil {
			if bytes.Compare(last, rg.Start) < 0 || (rg.Stop != nil && bytes.Compare(last, rg.Stop) >= 0) {
				return fmt.Errorf("%w: the resume token is outside the query's range", ErrBadRequest)
			}
			start = append(append([]byte(nil), last...), 0)
		}
		scans[i] = store.Scan{Start: start, Stop: rg.Stop, Caching: caching}
		open++
	}
	errs := make([]error, len(ranges))
	first := func(i int) {
		sc, err := r.st.Scan(ctx, qq.t.Name, scans[i])
		if err != nil {
			errs[i] = fmt.Errorf("read: query %s: scanning %s: %w", qq.q.Name, qq.t.Name, err)
			return
		}
		c := proto
		c.sc = sc
		cursors[i] = &c
		if c.advance(ctx); c.err != nil {
			errs[i] = fmt.Errorf("read: query %s: scanning %s: %w", qq.q.Name, qq.t.Name, c.err)
		}
	}
	var wg sync.WaitGroup
	for i := range ranges {
		if tok.Done[i] {
			continue
		}
		if open == 1 || r.local {
			first(i)
			continue
		}
		wg.Go(func() { first(i) })
	}
	wg.Wait()
	return firstError(errs)
}

// firstError is the first of errs that is not nil. Reads sent at once
// often fail for one cause (a cancelled context, a lost server), and one
// error says it better than the same error joined once per read.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
