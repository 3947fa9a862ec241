package read

import (
	"bytes"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
)

// counterRow sums a counter over its bucket rows. In exact mode each
// entity's contribution is its own cell (qualifier, a zero byte, the entity
// key) and the value is their sum, plus any total cell under the bare
// qualifier; in fast mode the bare cell is the value.
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
				if !bytes.Equal(c.Qualifier, bare) && !(exact && bytes.HasPrefix(c.Qualifier, prefix)) {
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
