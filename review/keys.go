package review

import (
	"fmt"
	"math"
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
		case rowkey.Salt, rowkey.Hash, rowkey.BitReverse:
			continue // these spread a sequence over the key space
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

// checkIndexHotPrefix: a key led by a low-cardinality field has only as
// many write targets as the field has values, and so has a key led by a
// salt or hash *of* such a field: hash(section, 1) of ten sections is ten
// leading bytes, whatever the hash's range.
func checkIndexHotPrefix(r *reviewer) {
	for _, t := range r.plan.Tables {
		if t.Role == schema.RoleCounter || t.Key == nil || t.Key.Len() == 0 {
			continue // counters have their own rule, counter-hot-row
		}
		p := t.Key.Part(0)
		where := at{table: t.Name, line: keyLine(t, 0)}
		switch p.Func {
		case rowkey.Plain, rowkey.Text, rowkey.Pad:
			low, why := r.lowCardinality(t, p.Field)
			if !low {
				continue
			}
			r.addSev("index-hot-prefix", r.guessSeverity(t, p.Field), where, fmt.Sprintf(
				"row key of %s starts with %s and %s: all writes for one value land in one region",
				t.Name, p.Expr, why))
		case rowkey.Salt, rowkey.Hash:
			low, why := r.lowCardinality(t, p.Field)
			if !low {
				continue
			}
			spread := spreadOf(p)
			values, known := r.cardinality(t, p.Field)
			// A hash of several fields has as many values as their
			// combinations: few only when every field has few.
			for _, f := range p.More() {
				l, w := r.lowCardinality(t, f)
				n, k := r.cardinality(t, f)
				if !l {
					low = false
					break
				}
				why += "; " + f + ": " + w
				values *= n
				known = known && k
			}
			if !low {
				continue
			}
			if known && values >= spread {
				continue // the field has values enough to fill every bucket
			}
			count := "a handful of"
			if known {
				count = fmt.Sprintf("at most %.0f", values)
			}
			r.addSev("index-hot-prefix", r.guessSeverity(t, p.Field), where, fmt.Sprintf(
				"row key of %s starts with %s, but %s is what is hashed and %s: the key has %s distinct leading values, not %s, so writes still land on that many regions",
				t.Name, p.Expr, strings.Join(p.Fields(), ", "), why, count, spreadText(spread)))
		}
	}
}

// guessSeverity grades a finding that rests on a field's spread: the
// rule's default when workload.keys or the type says it, one step down
// when only the field's name suggests it.
func (r *reviewer) guessSeverity(t *schema.Table, path string) Severity {
	if r.plan.Workload.Distribution(t.Entity, path) != nil {
		return ""
	}
	if f := r.field(t, path); f != nil && f.Type == rowkey.Bool {
		return ""
	}
	return SeverityInfo
}

// spreadOf is the number of distinct leading values a salt or hash part can
// produce from a field with unlimited values.
func spreadOf(p rowkey.Part) float64 {
	switch p.Func {
	case rowkey.Salt:
		return float64(max(p.N, 1))
	case rowkey.Hash:
		return math.Pow(256, float64(p.N))
	}
	return math.Inf(1)
}

func spreadText(n float64) string {
	if n >= 1<<32 {
		return "billions"
	}
	return fmt.Sprintf("%.0f", n)
}

// leadingTargets is how many distinct values the key's first part takes in
// practice: a salt or hash is capped by the values of the field it reads.
func (r *reviewer) leadingTargets(t *schema.Table, p rowkey.Part) float64 {
	spread := spreadOf(p)
	if n, ok := r.cardinality(t, p.Field); ok {
		return math.Min(spread, n)
	}
	return spread
}
