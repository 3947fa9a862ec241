package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
)

// A sink paused in the middle of the stream for longer than its session (a
// stopped process: its heartbeats stop with it) has its partitions handed
// to another sink. When it resumes it must not write what it held: it
// stops with an error naming the fence, the other sink applies the whole
// stream, and the tables end as `denorm apply` makes them. Both write to
// the test environment's HBase, whose client sets the hold's end as the
// deadline on its socket.
func TestSinkPausedPastItsSessionStops(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	u := sinkTopic(t, "denorm-sink-pause", 2)
	hb, st, schemaPath := sinkTables(t, "sinkpause")
	// No renames: live copies crossing between two writers are a known gap
	// of their own (TestSinkTwoProcessesShareGroup says why).
	events := genEvents(t, gen.OrdersOptions{Events: 6000, Seed: 91, Deletes: 0.02, Reorder: 0.05, Duplicate: 0.05})
	produce(t, u, events)
	total := int64(bytes.Count(events, []byte("\n")))
	model := modelStore(t, events)
	args := []string{"--schema", schemaPath, "--from", u.String(), "--store", hb, "--batch", "50",
		"--dead-letter", filepath.Join(t.TempDir(), "dead.jsonl")}

	a := startSink(t, args...)
	a.logged("partitions assigned")
	// Pause it a little way into the stream, while it holds a batch.
	deadline := time.Now().Add(time.Minute)
	for lag := groupLag(t, u); lag > total*9/10; lag = groupLag(t, u) {
		if time.Now().After(deadline) {
			t.Fatalf("the sink committed nothing in a minute:\n%s", a.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	left := groupLag(t, u)
	if left == 0 {
		t.Fatalf("the stream was applied before the pause; give it more events")
	}
	b := startSink(t, args...)
	b.logged("partitions assigned")
	t.Logf("paused with %d of %d records uncommitted; the other sink was assigned the partitions %s later",
		left, total, time.Since(paused).Round(time.Millisecond))
	waitCommitted(t, u, a, b)

	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(time.Minute):
		t.Fatalf("the resumed sink still runs a minute later:\n%s", a.output())
	}
	var exit *exec.ExitError
	if !errors.As(a.err, &exit) || exit.ExitCode() != exitProblems {
		t.Fatalf("the resumed sink ended with %v, want exit %d:\n%s", a.err, exitProblems, a.output())
	}
	out := a.output()
	t.Logf("the resumed sink's last lines:\n%s", lastLines(out, 3))
	if !strings.Contains(out, "fenced off its streams") {
		t.Fatalf("the resumed sink's log does not say it was fenced:\n%s", out)
	}
	b.stop()
	sameTables(t, model, st)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
