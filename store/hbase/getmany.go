package hbase

import (
	"context"
	"fmt"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

var _ store.MultiGetter = (*Store)(nil)

// multiGetMaxRows caps the Gets of one getMultiple call, so that one call's
// answer stays a bounded amount of work to redo when a call has to be sent
// again, and a large request does not wait on a single region server for
// everything.
const multiGetMaxRows = 500

// GetMany reads rows with getMultiple, up to multiGetMaxRows rows a call.
// The gateway answers in request order, with an empty result for a missing
// row. Each row is read atomically; rows are not read at one instant.
func (s *Store) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	rows := make([]store.Row, 0, len(gets))
	for start := 0; start < len(gets); start += multiGetMaxRows {
		chunk := gets[start:min(start+multiGetMaxRows, len(gets))]
		tgets := make([]*hbase2.TGet, len(chunk))
		for i, g := range chunk {
			tgets[i] = tget(g)
		}
		var res []store.Row
		err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
			args := hbase2.THBaseServiceGetMultipleArgs{Table: s.wireName(table), Tgets: tgets}
			res, err = callRows(ctx, c, "getMultiple", &args, &results{})
			return err
		})
		// Worked out on a failure only: a multi-get that works needs no
		// words, and the writer makes thousands of them.
		what := func() string {
			return fmt.Sprintf("get %d rows of %s (from row %s)", len(chunk), table, store.Printable(chunk[0].Row))
		}
		if err != nil {
			return nil, s.explain(ctx, what(), table, chunk[0].Row, err)
		}
		if len(res) != len(chunk) {
			return nil, fmt.Errorf("hbase: %s: the gateway answered %d results", what(), len(res))
		}
		for i, row := range res {
			row, err := s.gotRow(table, chunk[i].Row, row)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}
