package review

import (
	"fmt"
	"sort"
)

// Finding is one rule firing at one place in a schema. Its JSON form is part
// of the command's stable output: every key is always present, with "" or 0
// when it does not apply.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Table    string   `json:"table"`
	Query    string   `json:"query"`
	Line     int      `json:"line"` // 1-based line in the schema file; 0 when unknown
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
}

func (f Finding) String() string {
	where := ""
	if f.Line > 0 {
		where = fmt.Sprintf("line %d: ", f.Line)
	}
	return fmt.Sprintf("%s%s [%s] %s", where, f.Severity, f.Rule, f.Message)
}

// Summary counts findings by severity.
type Summary struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// Report is the result of reviewing one schema.
type Report struct {
	// File is the schema's name as the user gave it; SARIF uses it as the
	// artifact URI.
	File     string
	Findings []Finding
	// ToolVersion is the denorm version SARIF names as the driver's.
	ToolVersion string
}

// Summary counts the report's findings by severity.
func (r Report) Summary() Summary {
	var s Summary
	for _, f := range r.Findings {
		switch f.Severity {
		case SeverityError:
			s.Error++
		case SeverityWarning:
			s.Warning++
		default:
			s.Info++
		}
	}
	return s
}

// HasErrors reports whether any finding is an error; the command exits 1
// when it is.
func (r Report) HasErrors() bool { return r.Summary().Error > 0 }

// Has reports whether a rule fired at least once.
func (r Report) Has(rule string) bool {
	for _, f := range r.Findings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// sortFindings orders findings by line, then rule, table and query, so that
// output is stable from run to run.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.Query < b.Query
	})
}
