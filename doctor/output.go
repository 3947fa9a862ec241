package doctor

import (
	"encoding/json"
	"fmt"
	"io"
)

// Formats lists the output formats Write accepts.
func Formats() []string { return []string{"text", "json"} }

// Write prints a report as text (for people) or JSON (stable:
// {"findings":[{rule,severity,table,region,key_range,server,message,evidence,fix}],
// "summary":{error,warning,info}}).
func Write(w io.Writer, r Report, format string) error {
	switch format {
	case "json":
		out := struct {
			Findings []Finding `json:"findings"`
			Summary  any       `json:"summary"`
		}{r.Findings, r.Summary()}
		if out.Findings == nil {
			out.Findings = []Finding{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
		return nil
	case "text", "":
		return writeText(w, r)
	}
	return fmt.Errorf("unknown format %q", format)
}

func writeText(w io.Writer, r Report) error {
	for _, f := range r.Findings {
		if _, err := fmt.Fprintf(w, "%s\n", f); err != nil {
			return fmt.Errorf("write text: %w", err)
		}
		if f.KeyRange != "" {
			fmt.Fprintf(w, "    region %s holds rows %s\n", f.Region, f.KeyRange)
		}
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "    evidence: %s\n", e)
		}
		if f.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", f.Fix)
		}
	}
	s := r.Summary()
	if _, err := fmt.Fprintf(w, "%d errors, %d warnings, %d info\n", s.Error, s.Warning, s.Info); err != nil {
		return fmt.Errorf("write text: %w", err)
	}
	return nil
}
