package write

import (
	"sync"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
)

// deriveSet hands out the buffers one Apply derives states into, and takes
// them all back when the Apply ends: a batch derives every event's rows and
// every stored state's, and without reuse each derive allocates its cells,
// keys and item lists afresh, batch after batch, for the garbage collector
// to sweep.
//
// Invariant: nothing derived in an Apply is referenced once it returns. The
// store has copied or sent the mutations cut from the buffers before its
// Batch returned, and plans, groups and pendings die with the Apply.
type deriveSet struct {
	pool *sync.Pool // of *layout.Scratch, the Writer's
	mu   sync.Mutex // prepare and fold derive on several goroutines
	used []*layout.Scratch
}

func newDeriveSet(pool *sync.Pool) *deriveSet { return &deriveSet{pool: pool} }

// derive is layout.Derive into a Scratch of its own, valid until release.
func (d *deriveSet) derive(plan *schema.Plan, ent *schema.Entity, state map[string]any) (*layout.Derived, error) {
	sc, _ := d.pool.Get().(*layout.Scratch)
	if sc == nil {
		sc = new(layout.Scratch)
	}
	d.mu.Lock()
	d.used = append(d.used, sc)
	d.mu.Unlock()
	return sc.Derive(plan, ent, state)
}

// release returns every Scratch handed out to the pool.
func (d *deriveSet) release() {
	for _, sc := range d.used {
		d.pool.Put(sc)
	}
	d.used = nil
}
