package testenv

import (
	"bytes"
	"context"

	"github.com/denorm/denorm/store"
)

// RowByRow wraps st so that its scans read one row per call to the store,
// each at its own moment. The embedded store's scans read a snapshot
// taken when they start; HBase's read each row as it is at the moment the
// scanner reaches it (rows are consistent, a scan is not). A test of a
// job that runs beside a writer needs the HBase kind, under which a scan
// can meet an entity twice, or not at all, while it moves between rows.
// Reverse scans and scans that split rows (Batch) pass through as they
// are. The store returned is local (store.Local) when st is.
func RowByRow(st store.Store) store.Store {
	if store.Local(st) {
		return rowByRowSyncer{rowByRow{st}}
	}
	return rowByRow{st}
}

type rowByRow struct{ store.Store }

type rowByRowSyncer struct{ rowByRow }

func (s rowByRowSyncer) Sync(ctx context.Context) error { return s.Store.(store.Syncer).Sync(ctx) }

// GetMany keeps the wrapped store's multi-gets (a Get each otherwise).
func (s rowByRow) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	return store.GetMany(ctx, s.Store, table, gets)
}

func (s rowByRow) Scan(ctx context.Context, table string, sc store.Scan) (store.Scanner, error) {
	if sc.Reverse || sc.Batch > 0 {
		return s.Store.Scan(ctx, table, sc)
	}
	return &oneRowScans{st: s.Store, table: table, scan: sc}, nil
}

// oneRowScans scans one row at a time, each from just past the last.
type oneRowScans struct {
	st    store.Store
	table string
	scan  store.Scan
	row   store.Row
	read  int
	done  bool
	err   error
}

func (o *oneRowScans) Next(ctx context.Context) bool {
	if o.done || o.scan.Limit > 0 && o.read >= o.scan.Limit {
		return false
	}
	sc := o.scan
	sc.Limit = 1
	inner, err := o.st.Scan(ctx, o.table, sc)
	if err != nil {
		o.err, o.done = err, true
		return false
	}
	defer inner.Close()
	if !inner.Next(ctx) {
		o.err, o.done = inner.Err(), true
		return false
	}
	r := inner.Row()
	o.row = store.Row{Key: bytes.Clone(r.Key), Cells: make([]store.Cell, len(r.Cells))}
	for i, c := range r.Cells {
		o.row.Cells[i] = store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Timestamp: c.Timestamp, Value: bytes.Clone(c.Value)}
	}
	// The smallest key after this one.
	o.scan.Start = append(bytes.Clone(r.Key), 0)
	o.read++
	return true
}

func (o *oneRowScans) Row() store.Row { return o.row }
func (o *oneRowScans) Err() error     { return o.err }
func (o *oneRowScans) Close() error   { o.done = true; return nil }
