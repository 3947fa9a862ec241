package review

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

func sampleReport() Report {
	return Report{File: "dir/my schema.yaml", Findings: []Finding{
		{Rule: "key-monotonic", Severity: SeverityError, Table: "events", Line: 12, Message: "m1", Fix: "f1"},
		{Rule: "scan-unbounded", Severity: SeverityWarning, Query: "q", Line: 30, Message: "m2", Fix: "f2"},
		{Rule: "names-long", Severity: SeverityInfo, Table: "t", Message: "m3"},
	}}
}

func TestJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if keys := sortedKeys(doc); strings.Join(keys, ",") != "findings,summary" {
		t.Fatalf("top-level keys %v, want findings and summary", keys)
	}
	var fs []map[string]any
	if err := json.Unmarshal(doc["findings"], &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) != 3 {
		t.Fatalf("%d findings, want 3", len(fs))
	}
	for _, f := range fs {
		if keys := sortedKeys(f); strings.Join(keys, ",") != "fix,line,message,query,rule,severity,table" {
			t.Errorf("finding keys %v", keys)
		}
	}
	if fs[0]["line"].(float64) != 12 || fs[1]["query"] != "q" || fs[2]["fix"] != "" {
		t.Errorf("finding values not carried through: %v", fs)
	}
	var sum map[string]int
	if err := json.Unmarshal(doc["summary"], &sum); err != nil {
		t.Fatal(err)
	}
	if sum["error"] != 1 || sum["warning"] != 1 || sum["info"] != 1 || len(sum) != 3 {
		t.Errorf("summary %v, want one of each", sum)
	}
}

func TestJSONEmptyIsArray(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Report{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"findings": []`) {
		t.Errorf("empty report should have findings []: %s", buf.String())
	}
}

func TestSARIF(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID                   string `json:"id"`
						DefaultConfiguration struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(Catalogue()) {
		t.Errorf("%d driver rules, catalogue has %d", len(run.Tool.Driver.Rules), len(Catalogue()))
	}
	wantLevel := []string{"error", "warning", "note"}
	for i, res := range run.Results {
		if res.Level != wantLevel[i] {
			t.Errorf("result %d level %q, want %q", i, res.Level, wantLevel[i])
		}
		if run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %d: ruleIndex %d points at %s, not %s", i, res.RuleIndex, run.Tool.Driver.Rules[res.RuleIndex].ID, res.RuleID)
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation.ArtifactLocation.URI != "dir/my%20schema.yaml" {
			t.Errorf("result %d locations %+v", i, res.Locations)
		}
	}
	if r := run.Results[0].Locations[0].PhysicalLocation.Region; r == nil || r.StartLine != 12 {
		t.Errorf("first result region %+v, want startLine 12", r)
	}
	if r := run.Results[2].Locations[0].PhysicalLocation.Region; r != nil {
		t.Errorf("finding without a line must have no region (startLine must be >= 1), got %+v", r)
	}
}

func TestSARIFUnknownRule(t *testing.T) {
	r := Report{Findings: []Finding{{Rule: "no-such-rule", Severity: SeverityError}}}
	if err := WriteSARIF(&bytes.Buffer{}, r); err == nil {
		t.Fatal("a finding with an unknown rule must be an error")
	}
}

func TestText(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleReport(), "text"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"dir/my schema.yaml:12: error [key-monotonic] table events", "fix: f1", "1 error(s), 1 warning(s), 1 info"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if err := Write(&buf, sampleReport(), "xml"); err == nil {
		t.Error("unknown format must be an error")
	}
}

func TestHasErrors(t *testing.T) {
	r := sampleReport()
	if !r.HasErrors() {
		t.Error("report with an error finding: HasErrors false")
	}
	r.Findings = r.Findings[1:]
	if r.HasErrors() {
		t.Error("report without error findings: HasErrors true")
	}
}

func TestCatalogueComplete(t *testing.T) {
	want := []string{"key-monotonic", "key-read-mismatch", "counter-hot-row", "index-hot-prefix", "family-count",
		"row-unbounded", "cell-huge", "versions-as-history", "names-long", "scan-unbounded", "client-side-join",
		"table-as-queue", "connection-per-request", "puts-unbatched", "client-no-timeouts", "presplit-missing",
		"major-compaction-periodic", "wal-skipped", "region-size", "counter-not-idempotent", "copy-intent-missing",
		"ttl-with-version-timestamps",
		// Added by issue 15 (fan-out on write), after DESIGN.md's list.
		"fanout-amplification", "key-fields-mutable",
		// Added with TTLs in the writer's convergence tests (docs/writer.md,
		// "Time to live").
		"ttl-copy-outlives-primary", "ttl-bounded-counter"}
	cat := Catalogue()
	have := map[string]Rule{}
	for _, r := range cat {
		if _, dup := have[r.ID]; dup {
			t.Errorf("rule %s twice", r.ID)
		}
		have[r.ID] = r
		if r.Symptom == "" || r.Cause == "" || r.Fix == "" || r.Title == "" || r.Reads == "" {
			t.Errorf("rule %s lacks text", r.ID)
		}
		switch r.Severity {
		case SeverityError, SeverityWarning, SeverityInfo:
		default:
			t.Errorf("rule %s severity %q", r.ID, r.Severity)
		}
	}
	for _, id := range want {
		if _, ok := have[id]; !ok {
			t.Errorf("catalogue lacks %s", id)
		}
	}
	if len(cat) != len(want) {
		t.Errorf("catalogue has %d rules, DESIGN.md and issue 15 list %d", len(cat), len(want))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestHumanDuration(t *testing.T) {
	for in, want := range map[time.Duration]string{
		90 * 24 * time.Hour: "90d", 24 * time.Hour: "1d", time.Hour: "1h", 90 * time.Minute: "1h30m",
		20 * time.Millisecond: "20ms", 36 * time.Hour: "36h", 2 * time.Second: "2s",
	} {
		if got := humanDuration(in); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestSARIFDriverHelpAndMessages(t *testing.T) {
	rep := sampleReport()
	rep.ToolVersion = "v1.2.3"
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Version        string `json:"version"`
					InformationURI string `json:"informationUri"`
					Rules          []struct {
						ID      string `json:"id"`
						HelpURI string `json:"helpUri"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	d := log.Runs[0].Tool.Driver
	if d.Version != "v1.2.3" || !strings.HasPrefix(d.InformationURI, "https://") {
		t.Errorf("driver version %q informationUri %q", d.Version, d.InformationURI)
	}
	doc, err := os.ReadFile(rulesDoc)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Rules {
		id, ok := strings.CutPrefix(r.HelpURI, rulesDocURI+"#")
		if !ok || id != r.ID || !strings.Contains(string(doc), "\n## "+id+"\n") {
			t.Errorf("rule %s helpUri %q does not point at its docs/rules.md section", r.ID, r.HelpURI)
		}
	}
	for i, res := range log.Runs[0].Results {
		f := rep.Findings[i]
		if res.Message.Text != f.Message || (f.Fix != "" && strings.Contains(res.Message.Text, f.Fix)) {
			t.Errorf("result %d message %q: want the finding's message without its fix %q", i, res.Message.Text, f.Fix)
		}
	}
}

func TestArtifactURI(t *testing.T) {
	for in, want := range map[string]string{
		"examples/orders.yaml":      "examples/orders.yaml",
		"./dir/../s.yaml":           "s.yaml",
		"/srv/schemas/a b.yaml":     "file:///srv/schemas/a%20b.yaml",
		"hbase://127.0.0.1:9090/ev": "hbase://127.0.0.1:9090/ev",
	} {
		if got := artifactURI(in); got != want {
			t.Errorf("artifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
