package review

import (
	"fmt"
	"strings"

	"github.com/denorm/denorm/cost"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// CounterRow is review's estimate of a counter table's busiest row.
type CounterRow struct {
	// Cells and Bytes are the busiest row's, per time bucket when the key
	// holds a day() part (Window "day"), else over the entities the
	// workload stores (Window "stored").
	Cells, Bytes float64
	Window       string
	// Bounded: the mode keeps the row at a fixed size, whatever the traffic.
	Bounded bool
	// How the estimate spread the writes: key parts that spread them and
	// parts whose distribution the workload does not declare.
	SpreadBy, Undeclared []string
}

// EstimateCounterRow estimates the busiest row of a counter table at the
// plan's workload; ok is false when the workload gives too little to say.
//
// Exact mode keeps one contribution cell per entity (and element) in the
// row it counts in, so the busiest row holds its share of every entity
// that counts in the time bucket: the entity's event rate over a day (each
// event taken as a new entity, an upper bound when entities have several
// events) times the rows one event counts in, times the busiest key's
// share, over the buckets; without a time part in the key, the stored
// entities instead. Bounded and fast mode rows hold one cell per add column
// (bounded: plus a state cell), whatever the traffic.
func EstimateCounterRow(p *schema.Plan, t *schema.Table) (CounterRow, bool) {
	r := &reviewer{plan: p}
	return r.counterRow(t)
}

func (r *reviewer) counterRow(t *schema.Table) (CounterRow, bool) {
	if t.Role != schema.RoleCounter || t.Counter == nil || t.Key == nil {
		return CounterRow{}, false
	}
	key := int(cost.KeyBytes(r.plan, t))
	if t.Counter.Mode != schema.CounterExact {
		cr := CounterRow{Cells: float64(len(t.Counter.Adds)), Window: "any", Bounded: true}
		for _, a := range t.Counter.Adds {
			cr.Bytes += float64(cost.CellBytes(key, len(a.Family), len(a.Qualifier), 8))
		}
		if t.Counter.Bounded() {
			cr.Cells = 1 // one part cell per stream that counts in the row
			cr.Bytes = float64(cost.BoundedRowBytes(r.plan, t))
		}
		return cr, true
	}
	share, spreadBy, undeclared := r.busiestShare(t)
	buckets := float64(max(t.Counter.Buckets, 1))
	perEvent := r.plan.RowsPerEvent(t)
	daily := false
	for _, part := range t.Key.Parts() {
		daily = daily || part.Func == rowkey.Day
	}
	cr := CounterRow{SpreadBy: spreadBy, Undeclared: undeclared}
	switch rate := r.plan.EventsPerSecond(t.Entity); {
	case daily && rate > 0:
		cr.Window = "day"
		cr.Cells = rate * 86400 * perEvent * share / buckets
	case !daily && entityCount(r.plan, t.Entity) > 0:
		cr.Window = "stored"
		cr.Cells = float64(entityCount(r.plan, t.Entity)) * perEvent * share / buckets
	default:
		return CounterRow{}, false
	}
	if n := entityCount(r.plan, t.Entity); n > 0 && cr.Window == "day" {
		// No more contributions than entities, whatever the rate says.
		cr.Cells = min(cr.Cells, float64(n)*perEvent*share/buckets)
	}
	var ek int64
	if e := r.plan.Entity(t.Entity); e != nil {
		ek = cost.EntityKeyBytes(e)
	}
	for _, a := range t.Counter.Adds {
		cr.Bytes += cr.Cells * float64(cost.CellBytes(key, len(a.Family), len(a.Qualifier)+1+int(ek), 8))
	}
	cr.Cells *= float64(len(t.Counter.Adds))
	return cr, true
}

// checkCounterRow flags an exact-mode counter whose busiest row, at the
// declared workload, passes the row limits row-unbounded names.
func (r *reviewer) checkCounterRow(t *schema.Table) {
	cr, ok := r.counterRow(t)
	if !ok || cr.Bounded {
		return
	}
	per := "per day (its time bucket)"
	if cr.Window == "stored" {
		per = "over the entities the workload stores (its key has no time part)"
	}
	spread := "nothing spreads them"
	if len(cr.SpreadBy) > 0 {
		spread = "spread by " + strings.Join(cr.SpreadBy, ", ")
	}
	if len(cr.Undeclared) > 0 {
		spread += "; " + strings.Join(cr.Undeclared, ", ") + " not counted, as workload.keys does not give its distribution"
	}
	msg := fmt.Sprintf("counter table %s (mode exact) keeps one contribution cell per %s in each row it counts in: its busiest row takes about %s cells, %s, %s (%d bucket(s); %s); it grows with the traffic, and a read sums every cell. mode: bounded keeps each row at one cell per log stream that counts in it",
		t.Name, t.Entity, countText(cr.Cells), humanBytesF(cr.Bytes), per, max(t.Counter.Buckets, 1), spread)
	where := at{table: t.Name, line: firstLine(t.Lines["mode"], t.Line)}
	switch {
	case t.MaxRowSize > 0 && cr.Bytes > float64(t.MaxRowSize):
		r.add("row-unbounded", where, msg+fmt.Sprintf("; over the table's max_row_size of %s: reads of the row fail", humanBytes(t.MaxRowSize)))
	case cr.Cells >= unboundedChildren || cr.Bytes >= hugeRow:
		r.add("row-unbounded", where, msg)
	case cr.Cells > manyChildren || cr.Bytes >= bigRow:
		r.addSev("row-unbounded", SeverityWarning, where, msg)
	}
}
