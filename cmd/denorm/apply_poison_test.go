package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/denorm/denorm/source"
)

// One event the store cannot take (a status too long for the status
// index's row key) in the middle of a log: it goes to the dead letter once,
// every other event is applied exactly as in the log without it, and runs
// after that (resuming, or replaying from the start) change nothing and
// write no dead letter again.
func TestApplyPoisonEventInTheMiddle(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.jsonl")
	newCLI(t).ok("gen", "orders", "--events", "400", "--seed", "3", "--out", clean)
	b, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	poison := fmt.Sprintf(`{"entity":"order","key":"zz1","version":1,"state":{"orderId":"zz1","customerId":"c1","status":%q,"placedAt":"2026-10-04T10:00:00Z"}}`, strings.Repeat("S", 40_000))
	mid := len(lines) / 2
	withPoison := append(append(append([]string{}, lines[:mid]...), poison), lines[mid:]...)
	dirty := filepath.Join(dir, "dirty.jsonl")
	if err := os.WriteFile(dirty, []byte(strings.Join(withPoison, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	want := newCLI(t)
	want.ok("apply", "--schema", "../../examples/orders.yaml", "--events", clean)
	got := newCLI(t)
	if _, errs, code := got.run("apply", "--schema", "../../examples/orders.yaml", "--events", dirty, "--batch", "50"); code != 1 {
		t.Fatalf("apply with a poison event: exit %d, want 1 (dead letters); stderr:\n%s", code, errs)
	}
	deadPath := dirty + ".dead.jsonl"
	checkDead := func(when string) {
		t.Helper()
		b, err := os.ReadFile(deadPath)
		if err != nil {
			t.Fatal(err)
		}
		dls := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(dls) != 1 {
			t.Fatalf("%s: %d dead letters, want the poison event once", when, len(dls))
		}
		var dl source.DeadLetter
		if err := json.Unmarshal([]byte(dls[0]), &dl); err != nil {
			t.Fatal(err)
		}
		if dl.Line != int64(mid+1) || !strings.Contains(dl.Reason, "row key of") || !strings.Contains(dl.Reason, "orders_by_status") {
			t.Fatalf("%s: dead letter at line %d for %q, want line %d refused for the status index's row key", when, dl.Line, dl.Reason, mid+1)
		}
	}
	checkDead("first run")
	wantCells, gotCells := withoutPending(dumpStore(t, want.url)), withoutPending(dumpStore(t, got.url))
	if wantCells == "" || gotCells != wantCells {
		t.Fatalf("the log with a poison event differs from the clean log (%d and %d bytes of cells)", len(gotCells), len(wantCells))
	}
	out := got.ok("apply", "--schema", "../../examples/orders.yaml", "--events", dirty, "--format", "json")
	if !strings.Contains(out, `"events": 0`) {
		t.Fatalf("a rerun read events again:\n%s", out)
	}
	checkDead("resumed run")
	if out, errs, code := got.run("apply", "--schema", "../../examples/orders.yaml", "--events", dirty, "--from-start", "--format", "json"); code != 0 || !strings.Contains(out, `"dead_letters": 0`) {
		t.Fatalf("replay from the start: exit %d, want 0 with no new dead letter:\n%s%s", code, out, errs)
	}
	checkDead("replay from the start")
	if after := withoutPending(dumpStore(t, got.url)); after != gotCells {
		t.Fatal("a replay from the start changed the store")
	}
}

// A dead-letter file that is the events file would read its own dead
// letters back for ever: refused as a usage error, also through a link.
func TestApplyDeadLetterIsTheEventsFile(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "g.jsonl")
	if err := os.WriteFile(ev, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(ev, link); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	for _, dl := range []string{ev, link, filepath.Join(dir, ".", "g.jsonl")} {
		errs := c.fails(2, "apply", "--schema", "../../examples/orders.yaml", "--events", ev, "--dead-letter", dl)
		if !strings.Contains(errs, "is the events file itself") {
			t.Fatalf("--dead-letter %s: %s", dl, errs)
		}
	}
	if b, _ := os.ReadFile(ev); string(b) != "not json\n" {
		t.Fatalf("the events file changed: %q", b)
	}
}

// The same for the sink: a dead-letter topic that is the topic it reads.
func TestSinkDeadLetterIsTheSourceTopic(t *testing.T) {
	c := newCLI(t)
	errs := c.fails(2, "sink", "--schema", "../../examples/orders.yaml", "--from", "kafka://127.0.0.1:1/orders?group=g",
		"--dead-letter", "kafka://127.0.0.1:1/orders")
	if !strings.Contains(errs, "is the topic the sink reads") {
		t.Fatalf("%s", errs)
	}
}

// withoutPending drops the writer's pending-refs cells from a store dump:
// which refs an entity's write had to delete depends on how its events fell
// into batches, not on what the store shows. It drops the bounded
// counters' positional bookkeeping too (Counted records, counter state
// cells): they name each log's own positions, which differ between two
// logs; the counters' totals stay compared.
func withoutPending(dump string) string {
	var keep []string
	for _, l := range strings.Split(dump, "\n") {
		if !strings.Contains(l, `:\x00p `) && !strings.Contains(l, `:\x00c `) && !strings.Contains(l, `:\x00s `) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// A schema with a fanout table, which the writer does not write, is
// refused before anything is applied rather than leaving the table empty.
func TestApplyRefusesFanoutTables(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "posts.jsonl")
	line := `{"entity":"post","key":"p1","version":1,"state":{"postId":"p1","authorId":"u1","postedAt":1000}}`
	if err := os.WriteFile(ev, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	errs := c.fails(2, "apply", "--schema", "testdata/fanout.yaml", "--events", ev)
	if !strings.Contains(errs, "home") || !strings.Contains(errs, "fanout table") {
		t.Fatalf("%s", errs)
	}
	if _, err := os.Stat(ev + ".offset"); err == nil {
		t.Fatal("an offset was committed for a refused schema")
	}
}
