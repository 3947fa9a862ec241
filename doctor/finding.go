package doctor

import (
	"fmt"
	"sort"

	"github.com/denorm/denorm/review"
)

// Finding is one signal traced to a rule. Its JSON form is stable: every key
// is always present, "" or [] when it does not apply.
type Finding struct {
	Rule     string          `json:"rule"`
	Severity review.Severity `json:"severity"`
	Table    string          `json:"table"`
	Region   string          `json:"region"` // encoded region name
	// KeyRange is the region's rows, [start, end) in the HBase shell's
	// printable form, when the run could list the table's regions (--store);
	// /jmx names regions only by their encoded id.
	KeyRange string   `json:"key_range"`
	Server   string   `json:"server"`
	Message  string   `json:"message"`
	Evidence []string `json:"evidence"` // metric values and log lines behind the finding
	Fix      string   `json:"fix"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s [%s] %s", f.Severity, f.Rule, f.Message)
}

// Report is the doctor's result.
type Report struct {
	Findings []Finding `json:"findings"`
	// Notes say what the doctor left out of the input and why (metric
	// values out of range, log lines too long), so that no finding rests
	// on input it silently ignored.
	Notes []string `json:"notes,omitempty"`
}

// Summary counts the findings by severity.
func (r Report) Summary() review.Summary {
	var s review.Summary
	for _, f := range r.Findings {
		switch f.Severity {
		case review.SeverityError:
			s.Error++
		case review.SeverityWarning:
			s.Warning++
		default:
			s.Info++
		}
	}
	return s
}

// HasErrors reports whether any finding is an error; `denorm doctor` exits 1
// when one is.
func (r Report) HasErrors() bool { return r.Summary().Error > 0 }

// Has reports whether a rule fired, optionally for one table ("" for any).
func (r Report) Has(rule, table string) bool {
	for _, f := range r.Findings {
		if f.Rule == rule && (table == "" || f.Table == table) {
			return true
		}
	}
	return false
}

func newFinding(rule, table, region, server, msg string, evidence []string) Finding {
	sev, _, fix := ruleFor(rule)
	if evidence == nil {
		evidence = []string{}
	}
	return Finding{Rule: rule, Severity: sev, Table: table, Region: region, Server: server,
		Message: msg, Evidence: evidence, Fix: fix}
}

var severityRank = map[review.Severity]int{review.SeverityError: 0, review.SeverityWarning: 1, review.SeverityInfo: 2}

// sortFindings puts errors first, then orders by rule, table, region and
// server so output is stable from run to run.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if severityRank[a.Severity] != severityRank[b.Severity] {
			return severityRank[a.Severity] < severityRank[b.Severity]
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Server < b.Server
	})
}
