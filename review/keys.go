package review

import (
	"fmt"
	"strings"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// field returns the schema field a key part or query names, or nil.
func (r *reviewer) field(t *schema.Table, path string) *schema.Field {
	e := r.plan.Entity(t.Entity)
	if e == nil {
		return nil
	}
	return e.Field(path)
}

// sequential reports whether a field's values only grow: a timestamp, a
// field the workload declares sequential, or a version that is a clock.
// The reason is for the message.
func (r *reviewer) sequential(t *schema.Table, path string) (bool, string) {
	if d := r.plan.Workload.Distribution(t.Entity, path); d != nil {
		if d.Kind == schema.DistSequential {
			return true, "the workload declares it sequential"
		}
		return false, ""
	}
	if f := r.field(t, path); f != nil && f.Type == rowkey.Timestamp {
		return true, "it is a timestamp"
	}
	// A per-entity counter version restarts at 1 for every entity; only a
	// clock version grows across the table.
	if e := r.plan.Entity(t.Entity); e != nil && e.Version == path && e.VersionKind == schema.VersionEpochMillis {
		return true, "it is the entity's version, a clock"
	}
	return false, ""
}

// maybeSequence reports an integer entity key with no declared
// distribution: ids from a database sequence are the classic monotonic key.
func (r *reviewer) maybeSequence(t *schema.Table, path string) bool {
	if r.plan.Workload.Distribution(t.Entity, path) != nil {
		return false
	}
	f := r.field(t, path)
	e := r.plan.Entity(t.Entity)
	if f == nil || e == nil || !f.Type.Integer() {
		return false
	}
	for _, k := range e.Key {
		if k == path {
			return true
		}
	}
	return false
}

func keyLine(t *schema.Table, i int) int {
	if i < len(t.KeyLines) {
		return firstLine(t.KeyLines[i], t.Lines["rowkey"], t.Line)
	}
	return firstLine(t.Lines["rowkey"], t.Line)
}

// checkKeyMonotonic: the first key part decides which region a new row goes
// to; salt and hash parts spread rows whatever follows them.
func checkKeyMonotonic(r *reviewer) {
	for _, t := range r.plan.Tables {
		if t.Key == nil || t.Key.Len() == 0 {
			continue
		}
		p := t.Key.Part(0)
		where := at{table: t.Name, line: keyLine(t, 0)}
		switch p.Func {
		case rowkey.Salt, rowkey.Hash:
			continue
		case rowkey.Day:
			// Rows of one day share a prefix: writes of today go to one key
			// range, but the parts after the day still spread them inside it
			// once the range splits, so this is milder than a raw clock.
			r.addSev("key-monotonic", SeverityWarning, where, fmt.Sprintf(
				"row key of %s starts with %s: every write of a day goes to the same key range, the end of the table",
				t.Name, p.Expr))
			continue
		}
		seq, why := r.sequential(t, p.Field)
		if !seq {
			if r.maybeSequence(t, p.Field) {
				r.addSev("key-monotonic", SeverityWarning, where, fmt.Sprintf(
					"row key of %s starts with %s, an integer id whose distribution the workload does not declare: if ids are handed out in sequence, every new row goes to the last region (declare workload.keys.%s.%s to settle it)",
					t.Name, p.Expr, t.Entity, p.Field))
			}
			continue
		}
		dir := "the end"
		if p.Func == rowkey.Reverse {
			dir = "the start"
		}
		r.add("key-monotonic", where, fmt.Sprintf(
			"row key of %s starts with %s and %s: every new row sorts to %s of the table, so one region takes all writes",
			t.Name, p.Expr, why, dir))
	}
}

// lowCardinalityNames are field names that, unless the workload says
// otherwise, usually hold a handful of values.
var lowCardinalityNames = []string{"status", "state", "type", "kind", "flag", "category", "priority", "stage", "phase", "enabled", "active", "deleted"}

// lowCardinality reports whether a field likely has few distinct values,
// and why. A declared distribution overrides the guess from type and name.
func (r *reviewer) lowCardinality(t *schema.Table, path string) (bool, string) {
	const few = 64
	if d := r.plan.Workload.Distribution(t.Entity, path); d != nil {
		switch {
		case d.Kind == schema.DistWeighted && len(d.Values) > 0 && len(d.Values) <= few:
			return true, fmt.Sprintf("the workload gives it %d values", len(d.Values))
		case d.Cardinality > 0 && d.Cardinality <= few:
			return true, fmt.Sprintf("the workload gives it %d distinct values", d.Cardinality)
		}
		return false, ""
	}
	f := r.field(t, path)
	if f == nil {
		return false, ""
	}
	if f.Type == rowkey.Bool {
		return true, "it is a bool (two values)"
	}
	if f.Type != rowkey.String && !f.Type.Integer() {
		return false, ""
	}
	name := strings.ToLower(f.Name)
	for _, n := range lowCardinalityNames {
		if name == n || strings.HasSuffix(name, n) {
			return true, fmt.Sprintf("a field named %q usually has a handful of values (declare its distribution under workload.keys if not)", f.Name)
		}
	}
	return false, ""
}

// checkIndexHotPrefix: an index led by a low-cardinality field has only as
// many write targets as the field has values.
func checkIndexHotPrefix(r *reviewer) {
	for _, t := range r.plan.Tables {
		if t.Role == schema.RoleCounter || t.Key == nil || t.Key.Len() == 0 {
			continue // counters have their own rule, counter-hot-row
		}
		p := t.Key.Part(0)
		if p.Func != rowkey.Plain {
			continue
		}
		low, why := r.lowCardinality(t, p.Field)
		if !low {
			continue
		}
		r.add("index-hot-prefix", at{table: t.Name, line: keyLine(t, 0)}, fmt.Sprintf(
			"row key of %s starts with %s and %s: all writes for one value land in one region",
			t.Name, p.Expr, why))
	}
}
