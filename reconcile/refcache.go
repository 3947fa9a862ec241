package reconcile

import (
	"context"
	"fmt"
	"sync"

	"github.com/denorm/denorm/store"
)

// refCache keeps the reference rows of lookup tables for one run: many
// entities copy from the same referenced entity (orders of one product).
// A cached row may be older than the store's by the time it is used; that
// is safe, because a live copy is written at the reference row's timestamp
// and the writer's newer refresh carries a newer one. It holds at most cap
// rows: when full it starts over, so its memory does not grow with the
// number of referenced entities.
type refCache struct {
	mu   sync.Mutex
	cap  int
	rows map[string]store.Row
}

// refCacheCap is the reference rows a run keeps.
const refCacheCap = 20000

func newRefCache(cap int) *refCache { return &refCache{cap: cap, rows: map[string]store.Row{}} }

func (c *refCache) get(ctx context.Context, st store.Store, table, fam string, row []byte) (store.Row, error) {
	key := table + "\x00" + string(row)
	c.mu.Lock()
	r, ok := c.rows[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := st.Get(ctx, table, store.Get{Row: row, Columns: []store.Column{{Family: fam}}})
	if err != nil {
		return store.Row{}, fmt.Errorf("reconcile: get %s row %s: %w", table, store.Printable(row), err)
	}
	r = copyRow(r)
	c.mu.Lock()
	if len(c.rows) >= c.cap {
		c.rows = make(map[string]store.Row, c.cap)
	}
	c.rows[key] = r
	c.mu.Unlock()
	return r, nil
}
