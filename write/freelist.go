package write

import "sync"

// freeList keeps buffers an Apply is done with for the next one, up to
// limit of them. Unlike a sync.Pool it keeps them through garbage
// collections: a batch takes tens of milliseconds and the collector runs
// several times in one, so a pool handed most of them back empty. What it
// holds is bounded by what one batch uses (or limit), not by the store.
type freeList[T any] struct {
	mu    sync.Mutex
	free  []*T
	limit int
}

// get returns a kept buffer, or nil when none is kept.
func (f *freeList[T]) get() *T {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.free)
	if n == 0 {
		return nil
	}
	x := f.free[n-1]
	f.free[n-1] = nil
	f.free = f.free[:n-1]
	return x
}

// put keeps x unless limit buffers are kept already.
func (f *freeList[T]) put(x *T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.free) < f.limit {
		f.free = append(f.free, x)
	}
}
