package pebble

import (
	"context"
	"fmt"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// Get reads one row from a consistent view of the database.
func (s *Store) Get(ctx context.Context, name string, g store.Get) (store.Row, error) {
	t, err := s.begin(ctx, "get", name)
	if err != nil {
		return store.Row{}, err
	}
	defer s.leave()
	q, err := newQuery(t, g.Columns, g.MaxVersions, g.TimeRange, maxRowSize(t, s.opts.MaxRowSize))
	if err != nil {
		return store.Row{}, fmt.Errorf("get: %w", err)
	}
	t.regions.read(g.Row)
	row, err := s.getRow(t, q, g.Row)
	if err != nil {
		return store.Row{}, fmt.Errorf("get table %q row %s: %w", name, store.Printable(g.Row), err)
	}
	return row, nil
}

// getRow reads one row with a fresh iterator bounded to it.
func (s *Store) getRow(t *table, q *query, rowKey []byte) (store.Row, error) {
	lo := appendRowPrefix(nil, t.id, rowKey)
	it, err := s.db.NewIter(&pdb.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return store.Row{}, err
	}
	defer it.Close()
	if !s.seekRow(it, lo) {
		if err := it.Error(); err != nil {
			return store.Row{}, err
		}
		return store.Row{Key: append([]byte{}, rowKey...)}, nil
	}
	return newRowReader(t, q, s.now()).read(it)
}
