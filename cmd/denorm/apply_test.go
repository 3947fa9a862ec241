package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// TestMain lets a test start this binary as the denorm command itself:
// with DENORM_AS_COMMAND=1 the test binary runs the command line it is
// given instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("DENORM_AS_COMMAND") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// denormCmd is a `denorm` process, being this test binary in command mode.
func denormCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DENORM_AS_COMMAND=1")
	return cmd
}

// dumpStore renders every table of a store, for comparing two stores.
func dumpStore(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tables, err := st.ListTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tbl := range tables {
		sc, err := st.Scan(ctx, tbl, store.Scan{})
		if err != nil {
			t.Fatal(err)
		}
		for sc.Next(ctx) {
			r := sc.Row()
			// A bounded counter row's state cells are one per stream that
			// counted in it: the dump shows what they merge to, the
			// totals, which do not depend on how the log was cut.
			fam := ""
			for _, c := range r.Cells {
				if layout.IsCounterState(c.Qualifier) {
					fam = c.Family
					continue
				}
				b.WriteString(tbl + " " + store.Printable(r.Key) + " " + c.Family + ":" + store.Printable(c.Qualifier) + " " + store.Printable(c.Value) + "\n")
			}
			if fam != "" {
				cc, err := layout.ReadCounterCells(r, fam)
				if err != nil {
					t.Fatal(err)
				}
				for _, tot := range cc.Merged().Totals {
					fmt.Fprintf(&b, "%s %s total %s:%s %d\n", tbl, store.Printable(r.Key), tot.Family, store.Printable(tot.Qualifier), tot.Value)
				}
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		sc.Close()
	}
	return b.String()
}

// A real `denorm apply` process killed with SIGKILL at random points and
// started again ends in the same store as one uninterrupted run.
func TestApplySurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	events := filepath.Join(dir, "orders.jsonl")
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: 6000, Seed: 9, Deletes: 0.02, Renames: 0.02, Reorder: 0.05, Duplicate: 0.05}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := filepath.Join("..", "..", "examples", "orders.yaml")

	// The reference: one run, to completion.
	ref := "pebble://" + filepath.Join(dir, "ref")
	cmd := denormCmd("apply", "--schema", schema, "--events", events, "--store", ref,
		"--offset-file", filepath.Join(dir, "ref.offset"), "--batch", "200")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}

	// The victim: killed at random moments until a run completes.
	victim := "pebble://" + filepath.Join(dir, "victim")
	r := rand.New(rand.NewSource(20261130))
	kills := 0
	for attempt := 0; ; attempt++ {
		if attempt > 40 {
			t.Fatal("apply never completed")
		}
		cmd := denormCmd("apply", "--schema", schema, "--events", events, "--store", victim,
			"--offset-file", filepath.Join(dir, "victim.offset"), "--batch", "200")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d: %v\n%s", attempt, err, out.String())
			}
			goto compare
		case <-time.After(time.Duration(50+r.Intn(700)) * time.Millisecond):
			if kills >= 6 {
				// Enough kills: let this run finish, however slow the
				// machine (or the race detector) makes it.
				if err := <-done; err != nil {
					t.Fatalf("final run: %v\n%s", err, out.String())
				}
				goto compare
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		}
	}
compare:
	if kills == 0 {
		t.Fatal("the process was never killed; the test proves nothing")
	}
	t.Logf("%d kills", kills)
	if got, want := dumpStore(t, victim), dumpStore(t, ref); got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("killed store differs from the reference at line %d (of %d vs %d):\n got  %s\n want %s", i, len(gl), len(wl), gl[i], wl[i])
			}
		}
		t.Fatalf("killed store has %d lines, reference %d", len(gl), len(wl))
	}
}

// apply's JSON summary and exit codes: 0 when all applied, 1 with dead
// letters, 2 on usage errors.
func TestApplyCommand(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "e.jsonl")
	writeFile(t, events, `{"entity":"order","key":"o1","version":1,"state":{"orderId":"o1","customerId":"c1","status":"OPEN","placedAt":5,"items":[{"line":1,"sku":"s","quantity":3}]}}
{"entity":"order","key":"o1","version":"two"}
`)
	schema := filepath.Join("..", "..", "examples", "orders.yaml")
	url := "pebble://" + filepath.Join(dir, "db")
	code, stdout, stderr := runCmd(t, "apply", "--schema", schema, "--events", events, "--store", url, "--format", "json")
	if code != exitProblems {
		t.Fatalf("exit %d, want 1 (a dead letter); stderr %s", code, stderr)
	}
	var sum applyResult
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout, err)
	}
	if sum.Events != 2 || sum.Applied != 1 || sum.DeadLetters != 1 || sum.Cells["orders"] == 0 {
		t.Fatalf("summary %+v", sum)
	}
	// The order counts in one bounded daily_units row.
	if !strings.Contains(stdout, `"counter_rows": 1,`) {
		t.Fatalf("summary %s: want one bounded counter row written", stdout)
	}
	dead, err := os.ReadFile(events + ".dead.jsonl")
	if err != nil || !strings.Contains(string(dead), `"where":"e.jsonl:2"`) || !strings.Contains(string(dead), "version") {
		t.Fatalf("dead letter %q %v", dead, err)
	}
	// Resumes after the committed offset: nothing left to do.
	code, stdout, _ = runCmd(t, "apply", "--schema", schema, "--events", events, "--store", url, "--format", "json")
	if code != exitOK || !strings.Contains(stdout, `"events": 0`) {
		t.Fatalf("second run: exit %d %s", code, stdout)
	}
	for _, args := range [][]string{
		{"apply", "--events", events},
		{"apply", "--schema", schema},
		{"apply", "--schema", schema, "--events", filepath.Join(dir, "missing.jsonl"), "--store", url},
		{"apply", "--schema", schema, "--events", events, "--format", "xml"},
	} {
		if code, _, stderr := runCmd(t, args...); code != exitUsage {
			t.Fatalf("%v: exit %d, want 2; stderr %s", args, code, stderr)
		}
	}
}

// An event older than its primary table's TTL is skipped and counted as
// expired; a recent one is applied.
func TestApplyCountsExpired(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "e.jsonl")
	now := time.Now().UnixMilli()
	old := now - 100*24*3600*1000 // past device_events' 90 days
	writeFile(t, events, fmt.Sprintf(`{"entity":"reading","key":{"deviceId":"d1","ts":%d},"version":%d,"state":{"deviceId":"d1","ts":%d,"alert":"HOT"}}
{"entity":"reading","key":{"deviceId":"d1","ts":%d},"version":%d,"state":{"deviceId":"d1","ts":%d,"alert":"HOT"}}
`, old, old, old, now, now, now))
	schema := filepath.Join("..", "..", "examples", "device_events.yaml")
	code, stdout, stderr := runCmd(t, "apply", "--schema", schema, "--events", events, "--store", "pebble://"+filepath.Join(dir, "db"), "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var sum applyResult
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout, err)
	}
	if sum.Events != 2 || sum.Applied != 1 || sum.Expired != 1 || sum.Cells["device_alerts"] != 2 {
		t.Fatalf("summary %+v, want 2 events, 1 applied with its alert row, 1 expired", sum)
	}
}
