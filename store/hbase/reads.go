package hbase

import (
	"fmt"
	"math"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

func columns(cols []store.Column) []*hbase2.TColumn {
	var out []*hbase2.TColumn
	for _, c := range cols {
		// A nil qualifier is the whole family; an empty one is the column
		// with the empty qualifier, so it must not look unset.
		tc := &hbase2.TColumn{Family: []byte(c.Family)}
		if c.Qualifier != nil {
			tc.Qualifier = c.Qualifier
		}
		out = append(out, tc)
	}
	return out
}

func timeRange(tr store.TimeRange) *hbase2.TTimeRange {
	if tr == (store.TimeRange{}) {
		return nil
	}
	max := tr.Max
	if max == 0 {
		max = math.MaxInt64
	}
	return &hbase2.TTimeRange{MinStamp: tr.Min, MaxStamp: max}
}

func int32Ptr(n int) *int32 {
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	v := int32(n)
	return &v
}

func tget(g store.Get) *hbase2.TGet {
	t := &hbase2.TGet{Row: g.Row, Columns: columns(g.Columns), TimeRange: timeRange(g.TimeRange)}
	if g.MaxVersions > 0 {
		t.MaxVersions = int32Ptr(g.MaxVersions)
	}
	return t
}

// defaultCaching is how many rows a scanner fetches per round trip when the
// Scan does not say.
const defaultCaching = 100

func tscan(s store.Scan) *hbase2.TScan {
	t := &hbase2.TScan{
		StartRow:  s.Start,
		StopRow:   s.Stop,
		Columns:   columns(s.Columns),
		TimeRange: timeRange(s.TimeRange),
		// The generated struct's zero value would send 0 versions: the
		// field has a default in the IDL, so it is always set here.
		MaxVersions: 1,
	}
	if len(t.StartRow) == 0 {
		t.StartRow = nil
	}
	if len(t.StopRow) == 0 {
		t.StopRow = nil
	}
	if s.MaxVersions > 0 {
		t.MaxVersions = *int32Ptr(s.MaxVersions)
	}
	if s.Reverse {
		r := true
		t.Reversed = &r
	}
	if s.Batch > 0 {
		t.BatchSize = int32Ptr(s.Batch)
	}
	t.Caching = int32Ptr(fetchSize(s))
	// With a batch, rows arrive in pieces and the client counts rows
	// itself; the server's limit is only asked for whole rows.
	if s.Limit > 0 && s.Batch == 0 {
		t.Limit = int32Ptr(s.Limit)
	}
	return t
}

// fetchSize is the number of results asked for per getScannerRows call.
func fetchSize(s store.Scan) int {
	n := s.Caching
	if n <= 0 {
		n = defaultCaching
	}
	if s.Limit > 0 && s.Limit < n && s.Batch == 0 {
		n = s.Limit
	}
	return n
}

// gotRow is row as a get of key returns it: keyed by the key asked for
// (a missing row comes back without one), and refused when it is over
// the store's MaxRowSize, as hbase.table.max.rowsize refuses it.
func (s *Store) gotRow(table string, key []byte, row store.Row) (store.Row, error) {
	row.Key = key
	if n := rowSize(row); n > s.opts.MaxRowSize {
		return store.Row{}, fmt.Errorf("hbase: get row %s of %s (%d bytes): %w", store.Printable(key), table, n,
			&store.RowTooBigError{Table: table, Row: key, Limit: s.opts.MaxRowSize})
	}
	return row, nil
}

// rowSize is the KeyValue bytes of a row's cells, what HBase's
// hbase.table.max.rowsize is measured in.
func rowSize(r store.Row) int {
	n := 0
	for _, c := range r.Cells {
		n += store.CellSize(c.Row, c.Family, c.Qualifier, c.Value)
	}
	return n
}
