package reconcile

import (
	"context"
	"fmt"
	"sync"

	"github.com/denorm/denorm/layout"
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
	mu  sync.Mutex
	cap int
	n   int
	// rows holds, by lookup table and then by the encoded reference key
	// (which names one reference row of that table), the rows read. Keyed
	// by the key, a hit needs neither the row's location nor a string
	// built for the lookup.
	rows map[string]map[string]store.Row
}

// refCacheCap is the reference rows a run keeps.
const refCacheCap = 20000

func newRefCache(cap int) *refCache {
	return &refCache{cap: cap, rows: map[string]map[string]store.Row{}}
}

// get returns the reference row of lr's key in its lookup table, locating
// and reading it when the cache does not hold it.
func (c *refCache) get(ctx context.Context, st store.Store, lr *layout.LiveRef) (store.Row, error) {
	table := lr.Lookup.Name
	c.mu.Lock()
	r, ok := c.rows[table][string(lr.Key)]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	if err := lr.Locate(); err != nil {
		return store.Row{}, fmt.Errorf("reconcile: %w", err)
	}
	r, err := st.Get(ctx, table, store.Get{Row: lr.Row, Columns: []store.Column{{Family: lr.Lookup.Families[0].Name}}})
	if err != nil {
		return store.Row{}, fmt.Errorf("reconcile: get %s row %s: %w", table, store.Printable(lr.Row), err)
	}
	r = copyRow(r)
	c.mu.Lock()
	if c.n >= c.cap {
		c.rows, c.n = map[string]map[string]store.Row{}, 0
	}
	m := c.rows[table]
	if m == nil {
		m = map[string]store.Row{}
		c.rows[table] = m
	}
	if _, had := m[string(lr.Key)]; !had {
		c.n++
	}
	m[string(lr.Key)] = r
	c.mu.Unlock()
	return r, nil
}
