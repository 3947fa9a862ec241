package review

import (
	"fmt"
	"strings"
	"time"

	"github.com/denorm/denorm/schema"
)

// Thresholds for what counts as an online, latency-bound query.
const (
	tightLatency = 50 * time.Millisecond
	hotRate      = 100.0 // queries per second
)

func queryLine(q *schema.Query, key string) int {
	return firstLine(q.Lines[key], q.Line)
}

// online reports whether a query serves users: it declares a rate or a
// latency target. Queries with neither are treated as batch work.
func online(q *schema.Query) bool { return q.Rate > 0 || q.Latency > 0 }

// checkQueries covers the rules about how a query meets its table's key:
// key-read-mismatch, scan-unbounded and client-side-join.
func checkQueries(r *reviewer) {
	for _, q := range r.plan.Queries {
		t := r.plan.Table(q.Table)
		if t == nil || t.Key == nil {
			continue
		}
		r.checkKeyMatch(q, t)
		r.checkScanBounded(q, t)
		r.checkJoin(q, t)
	}
}

func (r *reviewer) checkKeyMatch(q *schema.Query, t *schema.Table) {
	where := at{table: t.Name, query: q.Name, line: queryLine(q, "by")}
	if q.Shape == schema.ShapeFull && q.FullScan && !online(q) {
		return // a declared batch scan is what a full scan is for
	}
	filtered := r.filterFields(q, t)
	if q.Range != nil && !q.Range.OnKey {
		filtered = append(filtered, q.Range.Field)
	}
	if q.Shape != schema.ShapeFull && len(filtered) == 0 {
		return
	}
	// Without the workload's numbers the shape decides: a read that fixes
	// nothing the caller asked for is an error, a filter after a useful
	// prefix a warning. With them, the rows read per call decide.
	sev := SeverityError
	var msg string
	switch {
	case q.Shape == schema.ShapeFull && q.FullScan:
		msg = fmt.Sprintf("query %s is declared a full scan of %s but runs online (rate or latency declared)", q.Name, t.Name)
	case q.Shape == schema.ShapeFull:
		msg = fmt.Sprintf("query %s by %s fixes no leading part of %s's key %s, so it reads the whole table",
			q.Name, fieldList(q.By), t.Name, t.Key)
	case len(q.By) > 0 && r.noGivenFieldLeads(q):
		// When none of the fields the caller gives is in the key prefix,
		// the key narrows nothing the caller asked for (at most a time
		// window over every entity): the full-scan mistake with a range.
		msg = fmt.Sprintf("query %s by %s: none of these fields leads %s's key %s, so it reads every row in its range and filters",
			q.Name, fieldList(q.By), t.Name, t.Key)
	default:
		sev = SeverityWarning
		msg = fmt.Sprintf("query %s scans the prefix of %s's key %s, then filters on %s, which the key does not order",
			q.Name, t.Name, t.Key, fieldList(filtered))
	}
	if est, ok := r.estimateRead(q, t); ok {
		sev = readSeverity(est.Read)
		msg += ": " + est.text()
	}
	if sev != SeverityInfo {
		if others := r.servingTables(q, t); len(others) > 0 {
			msg += "; " + strings.Join(others, ", ") + " would serve it"
		}
	}
	r.addSev("key-read-mismatch", sev, where, msg)
}

// noGivenFieldLeads reports whether every by field is left to filtering.
func (r *reviewer) noGivenFieldLeads(q *schema.Query) bool {
	for _, f := range q.By {
		if !contains(q.Bound.Unused, f) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// servingTables lists other tables of the same entity whose key prefix the
// query's fields fix.
func (r *reviewer) servingTables(q *schema.Query, t *schema.Table) []string {
	var out []string
	for _, o := range r.plan.Tables {
		if o == t || o.Entity != t.Entity || o.Key == nil || o.Role == schema.RoleCounter {
			continue
		}
		if b := o.Key.BindFields(q.By); b.Parts > 0 {
			out = append(out, "table "+o.Name)
		}
	}
	return out
}

func (r *reviewer) checkScanBounded(q *schema.Query, t *schema.Table) {
	// Fixing every key part bounds the rows even without a limit (a
	// bucketed counter is a few rows under one full key).
	if q.Shape == schema.ShapeGet || q.Limit > 0 || q.Bound.Full {
		return
	}
	if q.Shape == schema.ShapeFull && q.FullScan && !online(q) {
		return
	}
	where := at{table: t.Name, query: q.Name, line: q.Line}
	what := "every row under its key prefix"
	if q.Shape == schema.ShapeFull {
		what = "the whole table"
	}
	windowed := q.Range != nil && q.Range.OnKey && q.Range.Window() > 0
	if est, ok := r.estimateRead(q, t); ok {
		// The rows one call can read decide, whatever bounds them.
		r.addSev("scan-unbounded", readSeverity(est.Read), where, fmt.Sprintf(
			"query %s has no limit: it reads %s of %s, %s", q.Name, what, t.Name, est.text()))
		return
	}
	if windowed {
		// A time window on the key bounds the rows, though only as tightly
		// as the write rate allows; a limit still caps a burst.
		r.addSev("scan-unbounded", SeverityInfo, where, fmt.Sprintf(
			"query %s has no limit; its %s window on the key bounds it, but a burst of writes makes it arbitrarily long",
			q.Name, rangeText(q.Range)))
		return
	}
	r.add("scan-unbounded", where, fmt.Sprintf("query %s has no limit: it reads %s of %s", q.Name, what, t.Name))
}

// checkJoin: a thin index answers with primary keys only, so a page of N
// hits costs N more reads of the primary table.
func (r *reviewer) checkJoin(q *schema.Query, t *schema.Table) {
	if !t.Thin() || q.Shape == schema.ShapeGet {
		return
	}
	tight := q.Latency > 0 && q.Latency <= tightLatency
	if !tight && q.Rate < hotRate {
		return
	}
	n := "every"
	if q.Limit > 0 {
		n = fmt.Sprintf("each of up to %d", q.Limit)
	}
	primary := "the primary table"
	if p := r.plan.Primary(t.Entity); p != nil {
		primary = p.Name
	}
	why := fmt.Sprintf("at %.0f/s", q.Rate)
	if tight {
		why = fmt.Sprintf("within %s", humanDuration(q.Latency))
	}
	r.add("client-side-join", at{table: t.Name, query: q.Name, line: q.Line}, fmt.Sprintf(
		"query %s reads thin index %s (%s): %s hits needs another read of %s",
		q.Name, t.Name, why, n, primary))
}

func fieldList(fs []string) string {
	if len(fs) == 0 {
		return "[]"
	}
	return "[" + strings.Join(fs, ", ") + "]"
}
