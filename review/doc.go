package review

import (
	"fmt"
	"strings"
)

// RulesMarkdown renders the catalogue as docs/rules.md. The file in the
// repository is this function's output; a test fails when they differ, so
// the docs cannot drift from the rules the code applies.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("# The anti-pattern catalogue\n\n")
	b.WriteString("<!-- Generated from review/catalogue.go and review/examples.go by\n")
	b.WriteString("     `go test ./review -run TestRulesDoc -update`. Do not edit by hand. -->\n\n")
	b.WriteString("`denorm review SCHEMA` applies these rules to a schema file. Rule ids are stable:\n")
	b.WriteString("`denorm review` and `denorm doctor` share them. An error finding makes the command\n")
	b.WriteString("exit with status 1. Each example below is a complete schema that triggers its rule;\n")
	b.WriteString("a test checks that it still does. The severity shown is the rule's default; a finding\n")
	b.WriteString("can be milder or stricter where the section says so.\n\n")
	b.WriteString("Output: `--format text` for people; `--format json` is stable:\n\n")
	b.WriteString("    {\"findings\": [{\"rule\", \"severity\", \"table\", \"query\", \"line\", \"message\", \"fix\"}],\n")
	b.WriteString("     \"summary\": {\"error\": n, \"warning\": n, \"info\": n}}\n\n")
	b.WriteString("(every key always present; `line` is 0 when unknown); `--format sarif` is SARIF 2.1.0 with\n")
	b.WriteString("this catalogue as the driver's rules. Exit status: 0 without error findings, 1 with at\n")
	b.WriteString("least one, 2 when the schema cannot be loaded.\n\n")
	b.WriteString("## Reviewing a table that already exists\n\n")
	b.WriteString(liveDoc)
	b.WriteString("\n\n## How severity is chosen\n\n")
	b.WriteString(severityRule)
	b.WriteString("\n\n| rule | severity | in short |\n| --- | --- | --- |\n")
	cat := Catalogue()
	for _, r := range cat {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", r.ID, r.ID, r.Severity, r.Title)
	}
	for _, r := range cat {
		fmt.Fprintf(&b, "\n## %s\n\n", r.ID)
		fmt.Fprintf(&b, "%s. Severity: **%s**.\n\n", r.Title, r.Severity)
		if len(r.Levels) > 0 {
			b.WriteString("**Severity levels.**\n\n")
			for _, l := range r.Levels {
				fmt.Fprintf(&b, "- **%s**: %s.\n", l.Severity, l.When)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**Symptom.** %s\n\n", r.Symptom)
		fmt.Fprintf(&b, "**Cause.** %s\n\n", r.Cause)
		fmt.Fprintf(&b, "**Fix.** %s\n\n", r.Fix)
		fmt.Fprintf(&b, "**What it reads.** %s\n\n", r.Reads)
		b.WriteString("**Example that triggers it.**\n\n```yaml\n")
		b.WriteString(strings.TrimSpace(r.Example))
		b.WriteString("\n```\n")
	}
	return b.String()
}

// liveDoc describes `denorm review TABLE-URL` (package review/live).
const liveDoc = `` + "`denorm review hbase://HOST:9090/TABLE`" + ` (or ` + "`pebble:///DIR/TABLE`" + `) reviews a table with no
schema file. It describes the table (families and settings, regions), samples up
to ` + "`--sample N`" + ` row keys (the first keys of each region, then a scan from the start;
rows are read in pieces of 1,000 cells) and reports, under the rule ids below and
with the evidence in the message: key-monotonic (the keys start with a time: epoch
milliseconds as text or as an int64, a reversed timestamp, a date or a day number;
not after a salt byte), index-hot-prefix (16 or fewer distinct leading values, after
any salt byte, in a sample of 50 or more), family-count, versions-as-history,
names-long, ttl-with-version-timestamps (a TTL over sampled cell timestamps that are
not clock times), cell-huge and row-unbounded (from the largest sampled cell and
the widest sampled row) and region-size (most regions empty in the sample). Rules
about queries, rates and clients need a schema. ` + "`--draft FILE`" + ` writes a starting
schema from what was seen, whose own review finds the same key and family rules.`
