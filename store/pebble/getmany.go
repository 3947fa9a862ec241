package pebble

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

var _ store.MultiGetter = (*Store)(nil)

// GetMany reads many rows through one iterator, visiting them in key order
// so that each seek moves forward from the last: a Get pays for opening an
// iterator and loading index blocks, and a page of rows read one by one
// pays it per row. All rows are read from the iterator's point-in-time
// view, so here they are consistent with one another.
func (s *Store) GetMany(ctx context.Context, name string, gets []store.Get) ([]store.Row, error) {
	t, err := s.begin(ctx, "get many", name)
	if err != nil {
		return nil, err
	}
	defer s.leave()
	rows := make([]store.Row, len(gets))
	if len(gets) == 0 {
		return rows, nil
	}
	order := make([]int, len(gets))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(gets[a].Row, gets[b].Row) })

	lo, hi := tableBounds(t.id)
	it, err := s.db.NewIter(&pdb.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("get many from table %q: %w", name, err)
	}
	defer it.Close()
	var (
		now    = s.now()
		rr     *rowReader
		last   store.Get // the selection rr was made for
		prefix []byte
	)
	for n, i := range order {
		g := gets[i]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if rr == nil || !sameSelection(last, g) {
			q, err := newQuery(t, g.Columns, g.MaxVersions, g.TimeRange, maxRowSize(t, s.opts.MaxRowSize))
			if err != nil {
				return nil, fmt.Errorf("get many: %w", err)
			}
			rr, last = newRowReader(t, q, now), g
			rr.slab = true
		}
		rr.left = len(order) - n
		t.regions.read(g.Row)
		prefix = appendRowPrefix(prefix[:0], t.id, g.Row)
		row, err := s.readRowAt(it, rr, prefix, g.Row)
		if err != nil {
			return nil, fmt.Errorf("get many from table %q: row %s (%d of %d): %w", name, store.Printable(g.Row), n+1, len(gets), err)
		}
		rows[i] = row
	}
	return rows, nil
}

// readRowAt seeks to the row whose key prefix is prefix and reads it; a
// missing row is an empty Row keyed rowKey, as Get returns it.
func (s *Store) readRowAt(it *pdb.Iterator, rr *rowReader, prefix, rowKey []byte) (store.Row, error) {
	if !s.seekRow(it, prefix) {
		if err := it.Error(); err != nil {
			return store.Row{}, err
		}
		return store.Row{Key: append([]byte{}, rowKey...)}, nil
	}
	return rr.read(it)
}

// sameSelection reports whether two Gets select the same cells of a row,
// so that one query serves both.
func sameSelection(a, b store.Get) bool {
	if a.MaxVersions != b.MaxVersions || a.TimeRange != b.TimeRange || len(a.Columns) != len(b.Columns) {
		return false
	}
	for i, c := range a.Columns {
		d := b.Columns[i]
		// A nil qualifier is the whole family, an empty one a column.
		if c.Family != d.Family || (c.Qualifier == nil) != (d.Qualifier == nil) || !bytes.Equal(c.Qualifier, d.Qualifier) {
			return false
		}
	}
	return true
}
