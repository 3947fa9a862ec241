package read

import (
	"bytes"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// counterRow sums a counter over its bucket rows. In exact mode each
// entity's contribution is its own cell (qualifier, a zero byte, the entity
// key) and the value is their sum; a total cell under the bare qualifier
// is what mode fast left behind when the counter moved to exact (the
// contributions count every entity again) and is ignored, as reconcile
// deletes it. In fast mode the bare cell is the value; in bounded mode the
// row's state cells hold the totals.
func (r *Reader) counterRow(qq *query, it *item) (map[string]any, error) {
	key := it.last
	if qq.t.Counter.Buckets > 1 {
		key = key[:len(key)-1]
	}
	vals, err := qq.t.Key.DecodeValues(key)
	if err != nil {
		return nil, fmt.Errorf("read: counter %s row: %w", qq.t.Name, err)
	}
	out := make(map[string]any, len(vals)+len(qq.t.Counter.Adds))
	for k, v := range vals {
		out[k] = v
	}
	if qq.t.Counter.Bounded() {
		return out, boundedTotals(qq.t, it.rows, out)
	}
	exact := qq.t.Counter.Mode == schema.CounterExact
	for _, a := range qq.t.Counter.Adds {
		bare := []byte(a.Qualifier)
		prefix := append(append([]byte(nil), a.Qualifier...), 0)
		var sum int64
		for _, row := range it.rows {
			for _, c := range row.Cells {
				if c.Family != a.Family {
					continue
				}
				if exact && !bytes.HasPrefix(c.Qualifier, prefix) || !exact && !bytes.Equal(c.Qualifier, bare) {
					continue
				}
				n, err := layout.CellInt64(c.Value)
				if err != nil {
					return nil, fmt.Errorf("read: counter %s cell: %w", qq.t.Name, err)
				}
				sum += n
			}
		}
		out[a.Family+":"+a.Qualifier] = sum
	}
	return out, nil
}

// boundedTotals sums a bounded counter's totals over its bucket rows, from
// each row's state cells (one part per stream, and a base cell a repair
// writes): each cell changes with one put, so a row's totals are read as
// of whole batches of each stream. A row without any counts 0.
func boundedTotals(t *schema.Table, rows []store.Row, out map[string]any) error {
	fam := layout.CounterStateFamily(t)
	sums := make([]int64, len(t.Counter.Adds))
	for _, row := range rows {
		cc, err := layout.ReadCounterCells(row, fam)
		if err != nil {
			return fmt.Errorf("read: counter %s row %s: %w", t.Name, store.Printable(row.Key), err)
		}
		st := cc.Merged()
		for i, a := range t.Counter.Adds {
			sums[i] += st.Total(a.Family, []byte(a.Qualifier))
		}
	}
	for i, a := range t.Counter.Adds {
		out[a.Family+":"+a.Qualifier] = sums[i]
	}
	return nil
}
