package review

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Formats lists the output formats Write accepts.
var formats = []string{"text", "json", "sarif"}

// Formats returns the names Write accepts.
func Formats() []string { return append([]string(nil), formats...) }

// Write renders the report in one of Formats.
func Write(w io.Writer, r Report, format string) error {
	switch format {
	case "", "text":
		return WriteText(w, r)
	case "json":
		return WriteJSON(w, r)
	case "sarif":
		return WriteSARIF(w, r)
	}
	return fmt.Errorf("review: unknown format %q (want %s)", format, strings.Join(formats, ", "))
}

// WriteText writes findings for people: one block per finding, then a count.
func WriteText(w io.Writer, r Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		loc := r.File
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", r.File, f.Line)
		}
		if loc != "" {
			loc += ": "
		}
		fmt.Fprintf(&b, "%s%s [%s]", loc, f.Severity, f.Rule)
		if f.Table != "" {
			fmt.Fprintf(&b, " table %s", f.Table)
		}
		if f.Query != "" {
			fmt.Fprintf(&b, " query %s", f.Query)
		}
		fmt.Fprintf(&b, "\n    %s\n", f.Message)
		if f.Fix != "" {
			fmt.Fprintf(&b, "    fix: %s\n", f.Fix)
		}
	}
	s := r.Summary()
	fmt.Fprintf(&b, "%d error(s), %d warning(s), %d info\n", s.Error, s.Warning, s.Info)
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("review: write text report: %w", err)
	}
	return nil
}

// jsonReport is the documented JSON shape:
// {"findings":[{rule,severity,table,query,line,message,fix}],"summary":{error,warning,info}}.
type jsonReport struct {
	Findings []Finding `json:"findings"`
	Summary  Summary   `json:"summary"`
}

// WriteJSON writes the stable JSON form.
func WriteJSON(w io.Writer, r Report) error {
	out := jsonReport{Findings: r.Findings, Summary: r.Summary()}
	if out.Findings == nil {
		out.Findings = []Finding{} // [] rather than null: consumers iterate it
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("review: write JSON report: %w", err)
	}
	return nil
}
