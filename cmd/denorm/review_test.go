package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func needExample(t *testing.T, name string) string {
	t.Helper()
	path := "../../examples/" + name
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s: %v", path, err)
	}
	return path
}

func TestReviewExitCodes(t *testing.T) {
	naive := needExample(t, "orders_naive.yaml")
	good := needExample(t, "orders.yaml")
	if code, out, _ := runCmd(t, "review", naive); code != exitProblems || !strings.Contains(out, "error(s)") {
		t.Errorf("naive schema: exit %d, want 1\n%s", code, out)
	}
	if code, out, errs := runCmd(t, "review", good); code != exitOK {
		t.Errorf("good schema: exit %d, want 0\n%s%s", code, out, errs)
	}
	if code, _, _ := runCmd(t, "review", "no-such-file.yaml"); code != exitUsage {
		t.Errorf("missing file: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "review", good, "--format", "xml"); code != exitUsage {
		t.Errorf("bad format: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "review"); code != exitUsage {
		t.Errorf("no schema: exit %d, want 2", code)
	}
	bad := t.TempDir() + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("entities: {x: {nonsense: 1}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd(t, "review", bad); code != exitUsage || !strings.Contains(errs, "bad.yaml:1") {
		t.Errorf("invalid schema: exit %d, want 2 with file:line\n%s", code, errs)
	}
}

func TestReviewJSONAndSARIF(t *testing.T) {
	naive := needExample(t, "device_events_naive.yaml")
	code, out, _ := runCmd(t, "review", naive, "--format", "json")
	if code != exitProblems {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
		Summary  map[string]int   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if doc.Summary["error"] == 0 || len(doc.Findings) == 0 {
		t.Errorf("json: %+v", doc)
	}
	code, out, _ = runCmd(t, "review", naive, "--format", "sarif")
	var sarif map[string]any
	if code != exitProblems || json.Unmarshal([]byte(out), &sarif) != nil || sarif["version"] != "2.1.0" {
		t.Errorf("sarif: exit %d\n%.300s", code, out)
	}
}

func TestCostAndDdl(t *testing.T) {
	good := needExample(t, "orders.yaml")
	code, out, errs := runCmd(t, "cost", good, "--format", "json", "--replication", "2")
	if code != exitOK {
		t.Fatalf("cost: exit %d %s", code, errs)
	}
	var doc struct {
		Replication int              `json:"replication"`
		Tables      []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Replication != 2 || len(doc.Tables) == 0 {
		t.Errorf("cost json: %v %+v", err, doc)
	}
	if code, _, _ := runCmd(t, "cost", good, "--replication", "0"); code != exitUsage {
		t.Errorf("--replication 0: exit %d, want 2", code)
	}
	code, out, _ = runCmd(t, "cost", good, "--measure", "50")
	if code != exitOK || !strings.Contains(out, "measured: 50 synthetic records") {
		t.Errorf("cost --measure: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "ddl", good)
	if code != exitOK || strings.Count(out, "\ncreate ") < 2 {
		t.Errorf("ddl: exit %d\n%s", code, out)
	}
}
