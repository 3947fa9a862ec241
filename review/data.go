package review

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// hotCounterRate is the increments per second one counter row can take
// before its row lock becomes the bottleneck (increments of a row run one
// at a time, each a read, an add and a write).
const hotCounterRate = 200.0

// checkCounters covers counter-hot-row and counter-not-idempotent.
func checkCounters(r *reviewer) {
	for _, t := range r.plan.Tables {
		if t.Role != schema.RoleCounter || t.Counter == nil {
			continue
		}
		r.checkCounterMode(t)
		r.checkCounterHot(t)
		r.checkCounterRow(t)
	}
}

func (r *reviewer) checkCounterMode(t *schema.Table) {
	where := at{table: t.Name, line: firstLine(t.Lines["mode"], t.Line)}
	switch t.Counter.Mode {
	case schema.CounterExact, schema.CounterBounded:
	case schema.CounterFast:
		r.add("counter-not-idempotent", where, fmt.Sprintf(
			"counter table %s uses mode fast: a retried or replayed event is counted again, and the counts stay off until reconcile recomputes them (the schema cannot say whether reconcile is scheduled)", t.Name))
	default:
		r.add("counter-not-idempotent", where, fmt.Sprintf(
			"counter table %s does not declare a mode: without mode exact or bounded, a retried or replayed event is counted again", t.Name))
	}
}

// checkCounterHot estimates the increments per second on the busiest row of
// a counter: the table's increments spread over the distinct values its key
// can take at one moment. Time parts do not spread (every current write has
// the same day), and parts whose spread the workload does not declare are
// not counted on, so the estimate leans pessimistic.
func (r *reviewer) checkCounterHot(t *schema.Table) {
	rate := r.plan.WritesPerSecond(t) // increments per second, all rows together
	if rate <= 0 || t.Key == nil || t.Counter.Bounded() {
		// A bounded row takes at most one check-and-mutate per batch and
		// stream, not one increment per event.
		return
	}
	share, spreadBy, undeclared := r.busiestShare(t)
	buckets := max(t.Counter.Buckets, 1)
	perRow := rate * share / float64(buckets)
	if perRow < hotCounterRate {
		return
	}
	spread := "nothing spreads them"
	if len(spreadBy) > 0 {
		spread = "after spreading by " + strings.Join(spreadBy, ", ")
	}
	if len(undeclared) > 0 {
		spread += "; " + strings.Join(undeclared, ", ") + " not counted, as workload.keys does not give its distribution"
	}
	where := at{table: t.Name, line: firstLine(t.Lines["buckets"], t.Lines["rowkey"], t.Line)}
	r.add("counter-hot-row", where, fmt.Sprintf(
		"counter table %s takes up to about %.0f increments/s on its busiest row (%d bucket(s); %s); one row serialises its increments",
		t.Name, perRow, buckets, spread))
}

// hottestShare is the share of events carrying a field's most common value.
func hottestShare(d *schema.Distribution) float64 {
	switch d.Kind {
	case schema.DistWeighted:
		var total, top float64
		for _, w := range d.Values {
			total += w
			top = math.Max(top, w)
		}
		if total > 0 {
			return top / total
		}
	case schema.DistZipf:
		if d.Cardinality > 0 {
			// The first value's share of a Zipf law: 1 / H(n, s).
			var h float64
			n := min(d.Cardinality, 1_000_000)
			for k := int64(1); k <= n; k++ {
				h += 1 / math.Pow(float64(k), d.Skew)
			}
			return 1 / h
		}
	default:
		if d.Cardinality > 0 {
			return 1 / float64(d.Cardinality)
		}
	}
	return 1
}

// checkCopyIntent: every copied field must say whether it is a snapshot or
// a live view.
func checkCopyIntent(r *reviewer) {
	for _, e := range r.plan.Entities {
		for _, ref := range e.References {
			for _, c := range ref.Copies {
				if c.Intent != schema.IntentNone {
					continue
				}
				r.add("copy-intent-missing", at{line: firstLine(c.Line, ref.Line)}, fmt.Sprintf(
					"%s.%s is copied from %s.%s but says neither snapshot nor live", e.Name, c.Field, ref.Entity, c.From))
			}
		}
	}
}

// checkTTLWithVersions: TTL compares the cell timestamp with the clock, and
// denorm's cell timestamps are entity versions: the table's own entity's,
// and in two places another's. Live copies sit in the first family of the
// referencing primary table, stamped with the referenced entity's version,
// and a lookup table's reference rows carry that version too.
func checkTTLWithVersions(r *reviewer) {
	for _, t := range r.plan.Tables {
		e := r.plan.Entity(t.Entity)
		// Increments are stamped by the server clock, so counters are exempt.
		if e == nil || t.Role == schema.RoleCounter {
			continue
		}
		for i, f := range t.Families {
			if f.TTL <= 0 {
				continue
			}
			fate := "expires them at once"
			if f.MinVersions > 0 {
				fate = fmt.Sprintf("expires all but the newest %d version(s) at once, and those never", f.MinVersions)
			}
			line := at{table: t.Name, line: firstLine(f.Lines["ttl"], f.Line)}
			if counterVersions(e) {
				r.add("ttl-with-version-timestamps", line, fmt.Sprintf(
					"family %s of table %s has a TTL of %s, but its cells are stamped with %s's version %q, a counter, not a time: HBase sees them as written in 1970 and %s",
					f.Name, t.Name, humanDuration(f.TTL), e.Name, e.Version, fate))
			}
			for _, c := range copiedInto(r.plan, t, e, i) {
				if src := r.plan.Entity(c.ref.Entity); src != nil && counterVersions(src) {
					r.add("ttl-with-version-timestamps", line, fmt.Sprintf(
						"family %s of table %s has a TTL of %s, but it holds %s, stamped with %s's version %q, a counter, not a time: HBase sees them as written in 1970 and %s",
						f.Name, t.Name, humanDuration(f.TTL), c.what, src.Name, src.Version, fate))
				}
			}
		}
	}
}

// checkCopiesOutliveTTL: a TTL expires an entity's primary row without a
// write, so nothing deletes its copies; those in tables that keep cells
// longer stay behind.
func checkCopiesOutliveTTL(r *reviewer) {
	eachExpiring(r.plan, func(e *schema.Entity, prim *schema.Table, life time.Duration, fam string) {
		for _, t := range r.plan.Tables {
			if !t.HoldsCopiesOf(e.Name) || (t.Role != schema.RoleIndex && t.Role != schema.RoleLookup) {
				continue
			}
			for _, f := range t.Families {
				keeps := "keeps its cells forever"
				switch {
				case f.TTL > life:
					keeps = "keeps its cells for " + humanDuration(f.TTL)
				case f.TTL > 0 && f.MinVersions > 0:
					keeps = fmt.Sprintf("keeps the newest %d version(s) of a cell past its TTL", f.MinVersions)
				case f.TTL > 0:
					continue
				}
				r.add("ttl-copy-outlives-primary", at{table: t.Name, line: firstLine(f.Lines["ttl"], f.Line, t.Line)}, fmt.Sprintf(
					"%s rows of %s expire after %s (family %s of table %s), but family %s of %s table %s %s: copies of expired %ss stay behind",
					e.Name, prim.Name, humanDuration(life), fam, prim.Name, f.Name, t.Role, t.Name, keeps, e.Name))
				break
			}
		}
	})
}

// checkBoundedCounterTTL: mode bounded remembers what its totals hold of an
// entity in the entity's primary row, so a TTL that expires the row makes
// the writer forget the entity was counted. Its next event, if any, is
// counted on top of the old count (mode exact overwrites the old
// contribution where the entity still counts in the same row).
func checkBoundedCounterTTL(r *reviewer) {
	eachExpiring(r.plan, func(e *schema.Entity, prim *schema.Table, life time.Duration, fam string) {
		for _, t := range r.plan.Tables {
			if t.Role != schema.RoleCounter || t.Entity != e.Name || !t.Counter.Bounded() {
				continue
			}
			r.add("ttl-bounded-counter", at{table: t.Name, line: firstLine(t.Lines["mode"], t.Line)}, fmt.Sprintf(
				"counter %s is in mode bounded, whose record of what it counted of each %s lives in %s; that table expires rows after %s (family %s): a %s written again after it expired is counted twice",
				t.Name, e.Name, prim.Name, humanDuration(life), fam, e.Name))
		}
	})
}

// eachExpiring calls fn for every entity whose primary table expires its
// rows, with that table's shortest TTL and the family that has it.
func eachExpiring(p *schema.Plan, fn func(e *schema.Entity, prim *schema.Table, life time.Duration, fam string)) {
	for _, e := range p.Entities {
		prim := p.Primary(e.Name)
		if prim == nil {
			continue
		}
		if life, fam := shortestTTL(prim); life > 0 {
			fn(e, prim, life, fam)
		}
	}
}

// shortestTTL is the shortest TTL among a table's families that expire
// every version of a cell (no MIN_VERSIONS), and that family; 0 when none.
func shortestTTL(t *schema.Table) (time.Duration, string) {
	var life time.Duration
	var fam string
	for _, f := range t.Families {
		if f.TTL > 0 && f.MinVersions == 0 && (life == 0 || f.TTL < life) {
			life, fam = f.TTL, f.Name
		}
	}
	return life, fam
}

// counterVersions reports whether an entity declares a version that is a
// counter, not a time.
func counterVersions(e *schema.Entity) bool {
	return e.Version != "" && e.VersionKind != schema.VersionEpochMillis
}

// stamped is a reference whose entity's versions stamp cells of another
// entity's table, and what those cells are.
type stamped struct {
	ref  *schema.Reference
	what string
}

// copiedInto lists the references whose versions stamp cells in family
// fam (its position) of t, a table of entity e: in a primary table's first
// family, the live copies; in a lookup table, its reference's rows.
func copiedInto(plan *schema.Plan, t *schema.Table, e *schema.Entity, fam int) []stamped {
	var out []stamped
	switch {
	case t.Role == schema.RolePrimary && fam == 0:
		for _, ref := range e.References {
			if len(ref.Live) > 0 {
				out = append(out, stamped{ref, fmt.Sprintf("the live copies of %s.%s", ref.Entity, strings.Join(ref.Live, ", "))})
			}
		}
	case t.Role == schema.RoleLookup:
		for _, ref := range e.References {
			if ref.Name == t.Reference {
				out = append(out, stamped{ref, fmt.Sprintf("the reference rows of %s", ref.Entity)})
			}
		}
	}
	return out
}

// busiestShare is the share of a counter table's writes its busiest row
// (before buckets) takes: the key parts whose workload distribution spreads
// rows, each at its hottest value's share. It returns the parts that spread
// and those whose distribution the workload does not declare (counted as
// not spreading).
func (r *reviewer) busiestShare(t *schema.Table) (share float64, spreadBy, undeclared []string) {
	share = 1.0
	counted := map[string]bool{} // a field spreads rows once, salted or not
	plain := map[string]bool{}   // fields some part carries as they are
	for _, p := range t.Key.Parts() {
		if p.Recoverable() {
			plain[p.Field] = true
		}
	}
	for _, p := range t.Key.Parts() {
		if counted[p.Field] {
			continue
		}
		if p.Func == rowkey.Day {
			continue
		}
		if p.Func == rowkey.Salt || p.Func == rowkey.Hash {
			// A salt or hash spreads no further than the values of the
			// field it reads: its hottest value's rows share one bucket.
			// When the key carries those fields too, they decide the row
			// and the salt adds nothing.
			covered := true
			for _, f := range p.Fields() {
				covered = covered && plain[f]
			}
			if covered {
				continue
			}
			hot, all := 1.0, true
			for _, f := range p.Fields() {
				if d := r.plan.Workload.Distribution(t.Entity, f); d != nil {
					hot *= hottestShare(d)
				} else {
					all = false
				}
			}
			s := 1 / spreadOf(p)
			if all {
				s = math.Max(s, hot)
			}
			share *= s
			spreadBy = append(spreadBy, p.Expr)
			for _, f := range p.Fields() {
				counted[f] = true
			}
			continue
		}
		if seq, _ := r.sequential(t, p.Field); seq {
			continue
		}
		d := r.plan.Workload.Distribution(t.Entity, p.Field)
		if d == nil {
			undeclared = append(undeclared, p.Expr)
			continue
		}
		if s := hottestShare(d); s < 1 {
			share *= s
			spreadBy = append(spreadBy, p.Expr)
		}
		counted[p.Field] = true
	}
	return share, spreadBy, undeclared
}
