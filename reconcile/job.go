package reconcile

import (
	"fmt"
	"time"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// job is the work of one run (a part, a merge, or a whole single-process
// run) on one primary table of a plan.
type job struct {
	sp   *schema.Plan
	st   *metered
	plan *Plan
	pt   *PlanTable
	ent  *schema.Entity
	prim *schema.Table
	// loc is the entity's locator table, nil when it has none.
	loc  *schema.Table
	opts Options
	// derived lists the derived tables in plan order; byName indexes it.
	derived []*derivedTable
	byName  map[string]int
	refs    *refCache
	win     *window
	fixes   *fixer
	// lastCheckpoint is when the checkpoint was last written.
	lastCheckpoint time.Time
	// ttl holds the families whose cells expire, and now the time the job
	// measures them against (expiry.go).
	ttl map[string]map[string]int64
	now int64
}

// derivedTable is a derived table and its ranges.
type derivedTable struct {
	t      *schema.Table
	splits [][]byte
	kind   string
	exact  bool // an exact-mode counter: contributions, hashed as cells
	fast   bool // a fast-mode counter: totals, in a linear sketch
}

func (d *derivedTable) ranges() int { return len(d.splits) + 1 }

// counter reports whether the table's rows are subject to the window.
func (d *derivedTable) counter() bool { return d.exact || d.fast }

func newJob(sp *schema.Plan, st *metered, p *Plan, pt *PlanTable, opts Options, refs *refCache, fx *fixer) (*job, error) {
	prim := sp.Table(pt.Primary)
	if prim == nil || prim.Role != schema.RolePrimary {
		return nil, fmt.Errorf("reconcile: plan: %s is not a primary table of the schema", pt.Primary)
	}
	j := &job{sp: sp, st: st, plan: p, pt: pt, ent: sp.Entity(prim.Entity), prim: prim, loc: sp.Locator(prim.Entity), opts: opts, byName: map[string]int{}, refs: refs, fixes: fx, ttl: lifetimes(sp), now: clockOf(opts)()}
	for _, d := range pt.Derived {
		t := sp.Table(d.Table)
		if t == nil {
			return nil, fmt.Errorf("reconcile: plan: no table %s in the schema", d.Table)
		}
		dt := &derivedTable{t: t, splits: d.Splits, kind: kindOf(t)}
		if t.Role == schema.RoleCounter {
			dt.exact = t.Counter.Mode == schema.CounterExact
			dt.fast = !dt.exact
		}
		j.byName[t.Name] = len(j.derived)
		j.derived = append(j.derived, dt)
	}
	j.win = newWindowMs(sp, p.SinceMs)
	return j, nil
}

func kindOf(t *schema.Table) string {
	switch t.Role {
	case schema.RoleLookup:
		return KindLookup
	case schema.RoleCounter:
		return KindCounter
	}
	return KindIndex
}

// accs is one checksum per range of every derived table.
type accs [][]Acc

func (j *job) newAccs() accs {
	a := make(accs, len(j.derived))
	for i, d := range j.derived {
		a[i] = make([]Acc, d.ranges())
	}
	return a
}

func (a accs) add(o accs) {
	for i := range o {
		for r := range o[i] {
			a[i][r].add(o[i][r])
		}
	}
}

func copyRow(r store.Row) store.Row {
	out := store.Row{Key: append([]byte(nil), r.Key...), Cells: make([]store.Cell, len(r.Cells))}
	for i, c := range r.Cells {
		out.Cells[i] = store.Cell{Row: out.Key, Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Timestamp: c.Timestamp, Value: append([]byte(nil), c.Value...)}
	}
	return out
}

// failureCap bounds the failed repairs a report lists one by one (all
// are counted).
const failureCap = 100
