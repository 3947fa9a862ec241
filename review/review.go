// Package review applies the anti-pattern catalogue to a compiled schema.
//
// Each rule is a function over a schema.Plan that returns findings pointing
// at the line that causes them. The rules read only what the schema
// declares: where a rule needs a fact the schema cannot express, it stays
// silent rather than guess (docs/rules.md says which facts each rule reads).
package review

import "github.com/denorm/denorm/schema"

// checker is one rule (or a few closely related ones) over a plan.
type checker func(r *reviewer)

// checkers lists every rule function; TestEveryExampleTriggersItsRule
// checks that every catalogue id is produced by one of them.
func checkers() []checker {
	return []checker{
		checkKeyMonotonic,
		checkQueries, // key-read-mismatch, scan-unbounded, client-side-join
		checkIndexHotPrefix,
		checkFamilyCount,
		checkRowUnbounded,
		checkCellHuge,
		checkVersionsAsHistory,
		checkNamesLong,
		checkTableAsQueue,
		checkClient, // connection-per-request, puts-unbatched, client-no-timeouts
		checkPresplit,
		checkMajorCompaction,
		checkWAL,
		checkRegionSize,
		checkCounters, // counter-hot-row, counter-not-idempotent
		checkCopyIntent,
		checkTTLWithVersions,
		checkCopiesOutliveTTL,
		checkBoundedCounterTTL,
		checkFanout,
		checkKeyFieldsMutable,
	}
}

// reviewer carries the plan and collects findings.
type reviewer struct {
	plan     *schema.Plan
	rules    map[string]Rule
	findings []Finding
}

// Review applies every rule to the plan. It never fails: a plan that
// loaded is a plan that can be reviewed.
func Review(p *schema.Plan) Report {
	r := &reviewer{plan: p, rules: map[string]Rule{}}
	for _, rule := range Catalogue() {
		r.rules[rule.ID] = rule
	}
	for _, c := range checkers() {
		c(r)
	}
	sortFindings(r.findings)
	return Report{File: p.File, Findings: r.findings}
}

// at describes where a finding points.
type at struct {
	table, query string
	line         int
}

// add records a finding with the rule's default severity and fix.
func (r *reviewer) add(id string, where at, msg string) {
	r.addSev(id, "", where, msg)
}

// addSev records a finding with its own severity ("" for the default).
func (r *reviewer) addSev(id string, sev Severity, where at, msg string) {
	rule, ok := r.rules[id]
	if !ok {
		// A typo in a rule id is a bug in this package; tests catch it
		// because the finding would carry no fix and fail SARIF output.
		rule = Rule{ID: id, Severity: SeverityError}
	}
	if sev == "" {
		sev = rule.Severity
	}
	r.findings = append(r.findings, Finding{
		Rule: id, Severity: sev, Table: where.table, Query: where.query,
		Line: where.line, Message: msg, Fix: rule.Fix,
	})
}

// firstLine returns the first non-zero line, so that a finding points at
// the most specific place the schema recorded.
func firstLine(lines ...int) int {
	for _, l := range lines {
		if l > 0 {
			return l
		}
	}
	return 0
}
