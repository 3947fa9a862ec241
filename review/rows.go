package review

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// Rows read per call at which a read is graded up. One region server scans
// on the order of a million small rows a second, so a call past readError
// rows takes seconds of a server's time however few rows it returns, and
// past readWarning it is no longer a request-path read.
const (
	readWarning = 10_000
	readError   = 1_000_000
)

// readEstimate is what one call of a query costs in rows, from the
// workload: how many it reads and how many of those it returns.
type readEstimate struct {
	Read     float64
	Returned float64 // < 0 when the filters' selectivity is unknown
	Basis    string  // how Read was worked out, for the message
	Filters  []string
}

// readSeverity grades a read by its rows per call.
func readSeverity(rows float64) Severity {
	switch {
	case rows >= readError:
		return SeverityError
	case rows >= readWarning:
		return SeverityWarning
	}
	return SeverityInfo
}

// estimateRead works out rows read and returned per call of q from the
// workload. It reports false when the workload does not give what the
// estimate needs (entity counts or a write rate, and the cardinality of
// every fixed field); callers then fall back on the query's shape alone.
func (r *reviewer) estimateRead(q *schema.Query, t *schema.Table) (readEstimate, bool) {
	var est readEstimate
	if q.Shape == schema.ShapeGet {
		est.Read = float64(max(q.MultiGet, 1))
		est.Returned = est.Read
		est.Basis = "a get"
		return est, true
	}
	scope, basis, ok := r.rowsInScope(q, t)
	if !ok {
		return est, false
	}
	est.Basis = basis
	sel, known := 1.0, true
	for _, f := range r.filterFields(q, t) {
		s, ok := r.selectivity(q, t, f)
		est.Filters = append(est.Filters, f)
		if !ok {
			known = false
			continue
		}
		sel *= s
	}
	if q.Range != nil && !q.Range.OnKey {
		// A range the key does not order is a filter of unknown share.
		est.Filters = append(est.Filters, q.Range.Field)
		known = false
	}
	est.Read = scope
	est.Returned = -1
	if known {
		est.Returned = scope * sel
	}
	if q.Limit > 0 {
		lim := float64(q.Limit)
		switch {
		case len(est.Filters) == 0:
			est.Read = math.Min(scope, lim)
			est.Returned = est.Read
		case known && sel > 0:
			// The scan stops once the limit is met: at about limit/sel
			// rows, if the range holds that many.
			est.Read = math.Min(scope, lim/sel)
			est.Returned = math.Min(est.Returned, lim)
		}
	}
	return est, true
}

// rowsInScope is the number of rows the key lets a call read: the rows
// written during the query's time window, or the table's stored rows,
// divided by the spread of each fixed non-time part.
func (r *reviewer) rowsInScope(q *schema.Query, t *schema.Table) (float64, string, bool) {
	window := time.Duration(0)
	windowBy := ""
	parts := t.Key.Parts()
	fixed := q.Bound.Parts
	if q.Shape == schema.ShapeFull {
		fixed = 0
	}
	divide := 1.0
	var fixedBy []string
	counted := map[string]bool{} // a field narrows the scan once, however many parts read it
	for i := 0; i < fixed && i < len(parts); i++ {
		p := parts[i]
		if p.Func == rowkey.Salt {
			continue // fanned out or fixed, a salt bucket holds all of its rows
		}
		if p.Func == rowkey.Hash {
			// A fixed hash stands for its fields, which parts after it
			// usually repeat: count each field once.
			for _, f := range p.Fields() {
				if counted[f] {
					continue
				}
				counted[f] = true
				n, ok := r.cardinality(t, f)
				if !ok {
					return 0, "", false
				}
				divide *= n
				fixedBy = append(fixedBy, f)
			}
			continue
		}
		if counted[p.Field] {
			continue
		}
		counted[p.Field] = true
		if p.Func == rowkey.Day {
			window, windowBy = 24*time.Hour, "one day of "+p.Expr
			continue
		}
		if seq, _ := r.sequential(t, p.Field); seq {
			// An exact time or sequence value: one instant's rows.
			if window == 0 {
				window, windowBy = time.Millisecond, "one instant of "+p.Expr
			}
			continue
		}
		n, ok := r.cardinality(t, p.Field)
		if !ok {
			return 0, "", false
		}
		divide *= n
		fixedBy = append(fixedBy, p.Expr)
	}
	if q.Range != nil && q.Range.OnKey {
		if w := q.Range.Window(); w > 0 && (window == 0 || w < window) {
			window, windowBy = w, rangeText(q.Range)
		}
	}
	var rows float64
	var basis string
	if window > 0 {
		rate := r.plan.WritesPerSecond(t)
		if rate <= 0 {
			return 0, "", false
		}
		rows = rate * window.Seconds()
		basis = fmt.Sprintf("%s at %s row writes/s", windowBy, countText(rate))
	} else {
		n := r.storedRows(t)
		if n <= 0 {
			return 0, "", false
		}
		rows = n
		basis = fmt.Sprintf("%s stored rows", countText(n))
	}
	if len(fixedBy) > 0 {
		basis += " over the values of " + strings.Join(fixedBy, ", ")
	}
	return math.Max(rows/divide, 1), basis, true
}

// storedRows is how many rows the table holds: the entity count times the
// rows one entity has there, else the write rate over the TTL.
func (r *reviewer) storedRows(t *schema.Table) float64 {
	e := r.plan.Entity(t.Entity)
	if e == nil {
		return 0
	}
	if n := entityCount(r.plan, e.Name); n > 0 {
		return float64(n) * r.plan.RowsPerEvent(t)
	}
	var ttl time.Duration
	for _, f := range t.Families {
		ttl = max(ttl, f.TTL)
	}
	if rate := r.plan.WritesPerSecond(t); ttl > 0 && rate > 0 {
		return rate * ttl.Seconds()
	}
	return 0
}

// entityCount is the declared number of entities of one kind.
func entityCount(p *schema.Plan, entity string) int64 {
	w := p.Workload
	if n, ok := w.EntityCounts[entity]; ok {
		return n
	}
	if len(w.EntityCounts) == 0 && len(p.Entities) == 1 {
		return w.Entities
	}
	return 0
}

// cardinality is the number of distinct values of a field: declared in
// workload.keys, two for a bool, or the entity count for a one-field
// entity key.
func (r *reviewer) cardinality(t *schema.Table, path string) (float64, bool) {
	if d := r.plan.Workload.Distribution(t.Entity, path); d != nil {
		switch {
		case d.Kind == schema.DistWeighted && len(d.Values) > 0:
			return float64(len(d.Values)), true
		case d.Cardinality > 0:
			return float64(d.Cardinality), true
		}
	}
	if f := r.field(t, path); f != nil && f.Type == rowkey.Bool {
		return 2, true
	}
	if e := r.plan.Entity(t.Entity); e != nil && len(e.Key) == 1 && e.Key[0] == path {
		if n := entityCount(r.plan, e.Name); n > 0 {
			return float64(n), true
		}
	}
	return 0, false
}

// filterFields are the fields a call must test row by row: given fields
// and predicates the key prefix does not fix, less a predicate the table's
// own `when` already guarantees.
func (r *reviewer) filterFields(q *schema.Query, t *schema.Table) []string {
	var out []string
	for _, f := range q.Bound.Unused {
		if t.When != "" && f == t.When && r.impliedByWhen(q, t) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// impliedByWhen: a partial table holds only rows whose when field is set,
// so `where: {alert: true}` on it filters nothing.
func (r *reviewer) impliedByWhen(q *schema.Query, t *schema.Table) bool {
	for _, w := range q.Where {
		if w.Field == t.When {
			v := strings.ToLower(w.Value)
			return v != "" && v != "0" && v != "false"
		}
	}
	return false
}

// selectivity is the share of rows a filter on field keeps.
func (r *reviewer) selectivity(q *schema.Query, t *schema.Table, field string) (float64, bool) {
	d := r.plan.Workload.Distribution(t.Entity, field)
	for _, w := range q.Where {
		if w.Field != field {
			continue
		}
		if d != nil && d.Kind == schema.DistWeighted && len(d.Values) > 0 {
			var total float64
			for _, s := range d.Values {
				total += s
			}
			if total > 0 {
				return valueShare(d, w.Value) / total, true
			}
		}
	}
	if n, ok := r.cardinality(t, field); ok {
		return 1 / n, true
	}
	return 0, false
}

// valueShare is a weighted value's weight; a bool predicate also matches
// weights written as "set" values when it asks for true.
func valueShare(d *schema.Distribution, v string) float64 {
	if s, ok := d.Values[v]; ok {
		return s
	}
	if b, err := strconv.ParseBool(v); err == nil && b {
		var set float64
		for k, s := range d.Values {
			if k != "" && k != "0" && k != "false" {
				set += s
			}
		}
		return set
	}
	return 0
}

func rangeText(rg *schema.Range) string {
	switch {
	case rg.Last > 0:
		return "the last " + humanDuration(rg.Last)
	case rg.Calendar != "":
		return strings.ReplaceAll(rg.Calendar, "_", " ")
	}
	return humanDuration(rg.Window()) + " of " + rg.Field
}

// countText renders a row count for people: 1.7 billion, 72 million.
func countText(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3g billion", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3g million", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0f thousand", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// readText is an estimate for a message.
func (e readEstimate) text() string {
	s := fmt.Sprintf("about %s rows read per call (%s)", countText(e.Read), e.Basis)
	switch {
	case e.Returned >= 0:
		s += fmt.Sprintf(" to return about %s", countText(math.Max(e.Returned, 0)))
	case len(e.Filters) > 0:
		s += " to return the few that pass " + fieldList(e.Filters)
	}
	return s
}
