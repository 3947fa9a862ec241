package testenv

import (
	"context"
	"errors"
	"math/rand"
	"sync"

	"github.com/denorm/denorm/store"
)

// ErrCrashed is what every call of a Crashing store returns once its
// process died.
var ErrCrashed = errors.New("injected crash")

// CrashingStore is a process (a writer, a job) that dies after a budget of
// row writes (< 0: never), in the middle of the call that uses the budget
// up: of a Batch, a random part of the rows the budget allows lands. After
// that every call fails with ErrCrashed, reads too. Writes counts the row
// writes that landed.
type CrashingStore struct {
	store.Store
	r      *rand.Rand
	mu     sync.Mutex
	budget int
	writes int
	dead   bool
}

// Writes is the number of row writes that landed.
func (c *CrashingStore) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// take reserves up to n row writes; it reports how many may land and
// whether the process dies in this call.
func (c *CrashingStore) take(n int) (int, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return 0, false, ErrCrashed
	}
	if c.budget < 0 {
		c.writes += n
		return n, false, nil
	}
	if n <= c.budget {
		c.budget -= n
		c.writes += n
		return n, false, nil
	}
	land := c.r.Intn(c.budget + 1)
	c.budget, c.dead = 0, true
	c.writes += land
	return land, true, nil
}

func (c *CrashingStore) alive() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return ErrCrashed
	}
	return nil
}

// Crashing wraps st in a CrashingStore with budget, which draws from r
// what lands of the call that uses the budget up. The store it returns is
// local (store.Local) when st is, so that a writer sends and syncs through
// it as through st.
func Crashing(st store.Store, budget int, r *rand.Rand) (store.Store, *CrashingStore) {
	c := &CrashingStore{Store: st, budget: budget, r: r}
	if store.Local(st) {
		return crashingSyncer{c}, c
	}
	return c, c
}

// crashingSyncer is a CrashingStore over a local store.
type crashingSyncer struct{ *CrashingStore }

func (c crashingSyncer) Sync(ctx context.Context) error {
	if err := c.alive(); err != nil {
		return err
	}
	return c.Store.(store.Syncer).Sync(ctx)
}

func (c *CrashingStore) Get(ctx context.Context, table string, g store.Get) (store.Row, error) {
	if err := c.alive(); err != nil {
		return store.Row{}, err
	}
	return c.Store.Get(ctx, table, g)
}

func (c *CrashingStore) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	return store.GetMany(ctx, c.Store, table, gets)
}

func (c *CrashingStore) Scan(ctx context.Context, table string, s store.Scan) (store.Scanner, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	return c.Store.Scan(ctx, table, s)
}

func (c *CrashingStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	land, dies, err := c.take(len(ms))
	if err != nil {
		return nil, err
	}
	errs, err := c.Store.Batch(ctx, table, ms[:land])
	if err != nil || !dies {
		return errs, err
	}
	return nil, ErrCrashed
}

func (c *CrashingStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	land, _, err := c.take(1)
	if err != nil {
		return err
	}
	if land == 0 {
		return ErrCrashed
	}
	return c.Store.Mutate(ctx, table, m)
}

func (c *CrashingStore) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	land, _, err := c.take(1)
	if err != nil {
		return false, err
	}
	if land == 0 {
		return false, ErrCrashed
	}
	return c.Store.CheckAndMutate(ctx, table, cond, m)
}

func (c *CrashingStore) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	land, _, err := c.take(1)
	if err != nil {
		return nil, err
	}
	if land == 0 {
		return nil, ErrCrashed
	}
	return c.Store.Increment(ctx, table, inc)
}
