package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/faults"
	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/write"
)

var (
	buildOnce sync.Once
	builtPath string
	buildErr  error
)

// builtDenorm is the command built with go build, once per test binary:
// the plan/run/merge test runs the real program, as a Job's pods would.
func builtDenorm(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "denorm-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtPath = filepath.Join(dir, "denorm")
		out, err := exec.Command("go", "build", "-o", builtPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtPath
}

// TestReconcilePlanRunMerge runs `denorm reconcile plan`, one `run` process
// per part with JOB_COMPLETION_INDEX set as a Kubernetes Indexed Job sets
// it, and `merge`, over a store with faults of every kind injected: the
// merged report finds exactly those. A repair through the parts fixes all
// but the masked ones, which merge reports failed (exit 1); a single-process
// run with --purge-markers fixes those, and a dry run is then clean.
func TestReconcilePlanRunMerge(t *testing.T) {
	bin := builtDenorm(t)
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	url := "pebble://" + data
	schemaPath := ordersSchema
	sp, st := ordersStore(t, ctx, data)
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: 900, Seed: 3, SKUs: 30, Renames: 0.1, Deletes: 0.05}); err != nil {
		t.Fatal(err)
	}
	var evs []*event.Event
	for _, line := range bytes.Split(buf.Bytes(), []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			ev, err := event.Decode(sp, line)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	if _, rej, err := write.New(sp, st, write.Options{}).Apply(ctx, evs); err != nil || len(rej) > 0 {
		t.Fatalf("apply: %v, %d rejected", err, len(rej))
	}
	injected, err := faults.Inject(ctx, sp, st, faults.Options{Purges: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	denorm := func(env []string, args ...string) (stdout, stderr []byte, code int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if cmd.ProcessState == nil {
			t.Fatalf("denorm %v: %v", args, err)
		}
		return o.Bytes(), e.Bytes(), cmd.ProcessState.ExitCode()
	}
	const parts = 4
	planPath := filepath.Join(dir, "plan.json")
	if out, errOut, code := denorm(nil, "reconcile", "plan", "--schema", schemaPath, "--store", url, "--parts", fmt.Sprint(parts), "--range-rows", "200", "--out", planPath); code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	runAll := func(results string, extra ...string) {
		for i := 0; i < parts; i++ {
			// The embedded store admits one process at a time: in turn.
			args := append([]string{"reconcile", "run", "--plan", planPath, "--out", results}, extra...)
			out, errOut, code := denorm([]string{"JOB_COMPLETION_INDEX=" + fmt.Sprint(i)}, args...)
			if code != 0 {
				t.Fatalf("run part %d: exit %d\n%s%s", i, code, out, errOut)
			}
			logged := false
			sc := bufio.NewScanner(bytes.NewReader(errOut))
			for sc.Scan() {
				var line map[string]any
				if json.Unmarshal(sc.Bytes(), &line) == nil && line["part"] == float64(i) {
					logged = true
				}
			}
			if !logged {
				t.Fatalf("run part %d logged no JSON line naming the part:\n%s", i, errOut)
			}
		}
	}
	merge := func(results string) (*reconcile.Report, int) {
		metrics := filepath.Join(dir, "reconcile.prom")
		out, errOut, code := denorm(nil, "reconcile", "merge", results, "--format", "json", "--metrics-file", metrics)
		var rep reconcile.Report
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("merge: exit %d, %v\n%s%s", code, err, out, errOut)
		}
		m, err := os.ReadFile(metrics)
		if err != nil || !strings.Contains(string(m), "denorm_reconcile_copies_missing") {
			t.Fatalf("metrics file (%v):\n%s", err, m)
		}
		return &rep, code
	}
	check := func(what string, rep *reconcile.Report, masked bool) {
		t.Helper()
		for k, w := range injected {
			c := rep.Kinds[k]
			if c == nil {
				t.Fatalf("%s: no %s counts", what, k)
			}
			if c.Missing != w.Missing || c.Stale != w.Stale || c.Orphaned != w.Orphaned || c.Drifted != w.Drifted {
				t.Errorf("%s, %s: missing %d stale %d orphaned %d drifted %d, injected %+v", what, k, c.Missing, c.Stale, c.Orphaned, c.Drifted, *w)
			}
			if masked && c.Failed != w.Masked {
				t.Errorf("%s, %s: %d repairs failed, %d were masked", what, k, c.Failed, w.Masked)
			}
		}
	}
	runAll(filepath.Join(dir, "dry"), "--dry-run")
	dry, code := merge(filepath.Join(dir, "dry"))
	if code != 1 {
		t.Errorf("merge of a dry run with differences: exit %d, want 1", code)
	}
	check("merged dry run", dry, false)
	if dry.Rows == 0 || dry.Ranges.Unequal == 0 || dry.Ranges.Equal == 0 {
		t.Fatalf("merged dry run: %d rows, ranges %+v", dry.Rows, dry.Ranges)
	}
	runAll(filepath.Join(dir, "fix"))
	fix, code := merge(filepath.Join(dir, "fix"))
	if code != 1 {
		t.Errorf("merge of a repair with masked repairs: exit %d, want 1", code)
	}
	check("merged repair", fix, true)
	if _, errOut, code := denorm(nil, "reconcile", "merge", filepath.Join(dir, "nothing")); code != 2 {
		t.Errorf("merge of a missing directory: exit %d, want 2\n%s", code, errOut)
	}
	if out, errOut, code := denorm(nil, "reconcile", "--schema", schemaPath, "--store", url, "--purge-markers"); code != 0 {
		t.Fatalf("repair with --purge-markers: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := denorm(nil, "reconcile", "--schema", schemaPath, "--store", url, "--dry-run"); code != 0 {
		t.Fatalf("dry run after the purge: exit %d\n%s%s", code, out, errOut)
	}
}
