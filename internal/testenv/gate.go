package testenv

import (
	"context"
	"sync"

	"github.com/denorm/denorm/store"
)

// GateStore lets a test stop a writer at its first write of a batch, run
// another writer's batch to its end, and let the first go on: the
// interleaving in which two writers of one entity each derive from the
// state they read (a lost update), made on purpose rather than left to
// the scheduler. Once armed, the first write call closes the gate: it and
// every later call wait until Release, whichever goroutine of the writer
// makes them. Held reports when the gate is closed and no call is under
// way in the store, so that the other writer's batch runs alone.
type GateStore struct {
	store.Store
	mu       sync.Mutex
	changed  *sync.Cond
	armed    int // the write calls still to pass before the gate closes, plus one; 0: not armed
	closed   bool
	inFlight int
}

// Gate wraps st; the store it returns is local (store.Local) when st is.
func Gate(st store.Store) (store.Store, *GateStore) {
	g := &GateStore{Store: st}
	g.changed = sync.NewCond(&g.mu)
	if store.Local(st) {
		return gateSyncer{g}, g
	}
	return g, g
}

// Arm makes the next write call close the gate.
func (g *GateStore) Arm() { g.ArmAt(1) }

// ArmAt makes the n-th write call from now close the gate (the ones
// before it pass): a writer's first write is its locator rows, its second
// its primary rows.
func (g *GateStore) ArmAt(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = n
}

// Held waits until the gate is closed with no call under way, or done is
// closed (the writer finished without writing); it reports which.
func (g *GateStore) Held(done <-chan struct{}) bool {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-done:
			g.mu.Lock()
			g.changed.Broadcast()
			g.mu.Unlock()
		case <-stop:
		}
	}()
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if g.closed && g.inFlight == 0 {
			return true
		}
		select {
		case <-done:
			return false
		default:
		}
		g.changed.Wait()
	}
}

// Release opens the gate and disarms it.
func (g *GateStore) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.closed = 0, false
	g.changed.Broadcast()
}

// enter waits while the gate is closed, closing it first when write is
// the armed first write, and counts the call under way.
func (g *GateStore) enter(write bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if write && g.armed > 0 {
		if g.armed--; g.armed == 0 {
			g.closed = true
			g.changed.Broadcast()
		}
	}
	for g.closed {
		g.changed.Wait()
	}
	g.inFlight++
}

func (g *GateStore) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	g.changed.Broadcast()
}

type gateSyncer struct{ *GateStore }

func (g gateSyncer) Sync(ctx context.Context) error {
	g.enter(false)
	defer g.leave()
	return g.Store.(store.Syncer).Sync(ctx)
}

func (g *GateStore) Get(ctx context.Context, table string, get store.Get) (store.Row, error) {
	g.enter(false)
	defer g.leave()
	return g.Store.Get(ctx, table, get)
}

func (g *GateStore) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	g.enter(false)
	defer g.leave()
	return store.GetMany(ctx, g.Store, table, gets)
}

func (g *GateStore) Scan(ctx context.Context, table string, s store.Scan) (store.Scanner, error) {
	g.enter(false)
	defer g.leave()
	return g.Store.Scan(ctx, table, s)
}

func (g *GateStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	g.enter(true)
	defer g.leave()
	return g.Store.Batch(ctx, table, ms)
}

func (g *GateStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	g.enter(true)
	defer g.leave()
	return g.Store.Mutate(ctx, table, m)
}

func (g *GateStore) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	g.enter(true)
	defer g.leave()
	return g.Store.CheckAndMutate(ctx, table, cond, m)
}

func (g *GateStore) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	g.enter(true)
	defer g.leave()
	return g.Store.Increment(ctx, table, inc)
}
