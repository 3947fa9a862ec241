package reconcile

import (
	"fmt"
	"io"
	"sort"

	"github.com/denorm/denorm/store"
)

// Kinds of copies a report counts.
const (
	KindIndex   = "index"
	KindLookup  = "lookup"
	KindCounter = "counter"
	KindLive    = "live"
)

// Counts is what a run found for one kind of copy.
type Counts struct {
	Valid    int64 `json:"valid"`
	Missing  int64 `json:"missing"`
	Stale    int64 `json:"stale"`
	Orphaned int64 `json:"orphaned"`
	// Drifted counts fast-mode counter cells whose total differed from the
	// recomputed sum.
	Drifted  int64 `json:"drifted"`
	Repaired int64 `json:"repaired"` // cells written or deleted
	// Fixed counts the copies whose repair was read back as derived.
	Fixed  int64 `json:"fixed"`
	Failed int64 `json:"failed"` // repairs refused, or not visible when read back
}

// Differences is the number of copies that were not as derived.
func (c *Counts) Differences() int64 { return c.Missing + c.Stale + c.Orphaned + c.Drifted }

// Report is the outcome of a run.
type Report struct {
	Rows   int64              `json:"rows_scanned"` // primary rows
	DryRun bool               `json:"dry_run"`
	Kinds  map[string]*Counts `json:"kinds"`
	// Ranges counts the derived ranges compared by checksum: equal ones
	// are valid whole, unequal ones were diffed row by row.
	Ranges RangeCounts `json:"ranges"`
	// RowsRead is the rows the run scanned, per table; Gets the rows it
	// read one by one (reference rows for live copies, primary rows of
	// orphan candidates, derived rows a diff did not meet, read-backs).
	RowsRead map[string]int64 `json:"rows_read,omitempty"`
	Gets     map[string]int64 `json:"gets,omitempty"`
	// Failures lists failed repairs with their cause, the first 100.
	Failures []Failure `json:"failures,omitempty"`
}

// RangeCounts counts the ranges a run compared.
type RangeCounts struct {
	Equal   int64 `json:"equal"`
	Unequal int64 `json:"unequal"`
}

// Failure is one repair that did not take effect.
type Failure struct {
	Kind  string `json:"kind"`
	Table string `json:"table"`
	Row   string `json:"row"` // printable
	Cause string `json:"cause"`
}

// fail counts a failed repair and keeps its cause.
func (r *Report) fail(kind, table string, row []byte, cause string) {
	r.Kinds[kind].Failed++
	if len(r.Failures) < failureCap {
		r.Failures = append(r.Failures, Failure{Kind: kind, Table: table, Row: store.Printable(row), Cause: cause})
	}
}

func (r *Report) addReads(reads, gets map[string]int64) {
	add := func(to *map[string]int64, m map[string]int64) {
		if len(m) == 0 {
			return
		}
		if *to == nil {
			*to = map[string]int64{}
		}
		for t, n := range m {
			(*to)[t] += n
		}
	}
	add(&r.RowsRead, reads)
	add(&r.Gets, gets)
}

// After is the differences left after the run: all of them in a dry run,
// those whose repair was not read back as done otherwise.
func (r *Report) After() int64 {
	if r.DryRun {
		return r.Differences()
	}
	var n int64
	for _, c := range r.Kinds {
		n += max(0, c.Differences()-c.Fixed)
	}
	return n
}

func newReport(dry bool) *Report {
	r := &Report{DryRun: dry, Kinds: map[string]*Counts{}}
	for _, k := range []string{KindIndex, KindLookup, KindCounter, KindLive} {
		r.Kinds[k] = &Counts{}
	}
	return r
}

// kind is the counts of kind k, made at its first use: a kind that only
// some schemas have (KindLocator) shows only in their reports.
func (r *Report) kind(k string) *Counts {
	c := r.Kinds[k]
	if c == nil {
		c = &Counts{}
		r.Kinds[k] = c
	}
	return c
}

// Differences sums the differences of every kind.
func (r *Report) Differences() int64 {
	var n int64
	for _, c := range r.Kinds {
		n += c.Differences()
	}
	return n
}

// Failed sums the failed repairs of every kind.
func (r *Report) Failed() int64 {
	var n int64
	for _, c := range r.Kinds {
		n += c.Failed
	}
	return n
}

// Add merges another report (of another shard) into r.
func (r *Report) Add(o *Report) {
	r.Rows += o.Rows
	r.Ranges.Equal += o.Ranges.Equal
	r.Ranges.Unequal += o.Ranges.Unequal
	r.addReads(o.RowsRead, o.Gets)
	for _, f := range o.Failures {
		if len(r.Failures) < failureCap {
			r.Failures = append(r.Failures, f)
		}
	}
	for k, c := range o.Kinds {
		m := r.Kinds[k]
		if m == nil {
			m = &Counts{}
			r.Kinds[k] = m
		}
		m.Valid += c.Valid
		m.Missing += c.Missing
		m.Stale += c.Stale
		m.Orphaned += c.Orphaned
		m.Drifted += c.Drifted
		m.Repaired += c.Repaired
		m.Fixed += c.Fixed
		m.Failed += c.Failed
	}
}

func (r *Report) kinds() []string {
	ks := make([]string, 0, len(r.Kinds))
	for k := range r.Kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	mode := "repair"
	if r.DryRun {
		mode = "dry run"
	}
	if _, err := fmt.Fprintf(w, "%s: %d primary rows scanned, %d ranges equal, %d diffed\n%-8s %8s %8s %8s %8s %8s %8s %8s %8s\n",
		mode, r.Rows, r.Ranges.Equal, r.Ranges.Unequal,
		"kind", "valid", "missing", "stale", "orphaned", "drifted", "repaired", "fixed", "failed"); err != nil {
		return err
	}
	for _, k := range r.kinds() {
		c := r.Kinds[k]
		if _, err := fmt.Fprintf(w, "%-8s %8d %8d %8d %8d %8d %8d %8d %8d\n", k, c.Valid, c.Missing, c.Stale, c.Orphaned, c.Drifted, c.Repaired, c.Fixed, c.Failed); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "differences before: %d, after: %d\n", r.Differences(), r.After()); err != nil {
		return err
	}
	for _, f := range r.Failures {
		if _, err := fmt.Fprintf(w, "failed: %s %s row %s: %s\n", f.Kind, f.Table, f.Row, f.Cause); err != nil {
			return err
		}
	}
	return nil
}

// WriteMetrics writes the report in Prometheus text format, for the node
// exporter's textfile collector.
func (r *Report) WriteMetrics(w io.Writer, table string) error {
	p := func(format string, a ...any) error { _, err := fmt.Fprintf(w, format, a...); return err }
	if err := p("# HELP denorm_reconcile_rows_scanned Primary rows the last reconcile run scanned.\n# TYPE denorm_reconcile_rows_scanned gauge\ndenorm_reconcile_rows_scanned{table=%q} %d\n", table, r.Rows); err != nil {
		return err
	}
	metrics := []struct {
		name, help string
		get        func(*Counts) int64
	}{
		{"valid", "Copies found as derived.", func(c *Counts) int64 { return c.Valid }},
		{"missing", "Copies the store lacked.", func(c *Counts) int64 { return c.Missing }},
		{"stale", "Copies with cells other than derived.", func(c *Counts) int64 { return c.Stale }},
		{"orphaned", "Copies no primary row derives.", func(c *Counts) int64 { return c.Orphaned }},
		{"drifted", "Fast-mode counter cells off their recomputed sum.", func(c *Counts) int64 { return c.Drifted }},
		{"repaired", "Cells written or deleted by repairs.", func(c *Counts) int64 { return c.Repaired }},
		{"fixed", "Copies whose repair was read back as derived.", func(c *Counts) int64 { return c.Fixed }},
		{"failed", "Repairs refused by the store or not visible when read back.", func(c *Counts) int64 { return c.Failed }},
	}
	if err := p("# HELP denorm_reconcile_ranges Derived ranges compared by checksum, by outcome.\n# TYPE denorm_reconcile_ranges gauge\ndenorm_reconcile_ranges{table=%q,outcome=\"equal\"} %d\ndenorm_reconcile_ranges{table=%q,outcome=\"unequal\"} %d\n", table, r.Ranges.Equal, table, r.Ranges.Unequal); err != nil {
		return err
	}
	for _, m := range metrics {
		name := "denorm_reconcile_copies_" + m.name
		if err := p("# HELP %s %s\n# TYPE %s gauge\n", name, m.help, name); err != nil {
			return err
		}
		for _, k := range r.kinds() {
			if err := p("%s{table=%q,kind=%q} %d\n", name, table, k, m.get(r.Kinds[k])); err != nil {
				return err
			}
		}
	}
	return nil
}
