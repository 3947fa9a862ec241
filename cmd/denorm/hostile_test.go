package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Bad input that the commands take is an input error (exit 2) with a
// message that says what is wrong; see docs/errors.md.

func TestBadStoreURLsAreInputErrors(t *testing.T) {
	c := newCLI(t)
	abs := filepath.ToSlash(t.TempDir())
	for _, tc := range []struct{ url, want string }{
		{"pebble://relative/dir", `host must be empty`},
		{"pebble://", "names no directory"},
		{"pebble://" + abs + "/d?x=1", `unknown parameter "x"`},
		{"pebble://" + abs + "/d?max_cell_size=-1", "not a positive integer"},
		{"hbase://", "names no host"},
		{"hbase://127.0.0.1:1?zz=1", `unknown parameter "zz"`},
		{"", "--store is empty"},
		{"   ", "--store is empty"},
	} {
		c.url = tc.url
		errs := c.fails(exitUsage, "table", "list")
		if !strings.Contains(errs, tc.want) {
			t.Errorf("--store %q: stderr %q lacks %q", tc.url, errs, tc.want)
		}
	}
}

// Unknown URL parameters are all named, sorted, the same on every run.
func TestUnknownStoreParametersInStableOrder(t *testing.T) {
	c := newCLI(t)
	c.url += "?zeta=1&alpha=2&mid=3&durability=sync_wal"
	want := `unknown parameter "alpha", "mid", "zeta"`
	for range 20 {
		if errs := c.fails(exitUsage, "table", "list"); !strings.Contains(errs, want) {
			t.Fatalf("stderr %q lacks %q", errs, want)
		}
	}
	// HBase's parameters are checked in name order: the first bad one in
	// that order is named, whatever the map's order.
	c.url = "hbase://127.0.0.1:1?zz=1&aa=2&pool=x"
	for range 20 {
		if errs := c.fails(exitUsage, "table", "list"); !strings.Contains(errs, `unknown parameter "aa"`) {
			t.Fatalf("stderr %q does not name aa", errs)
		}
	}
}

func TestBadRowKeysAreInputErrors(t *testing.T) {
	c := newCLI(t)
	c.ok("table", "create", "t", "--family", "d")
	long := strings.Repeat("k", maxRowKey+1)
	for _, args := range [][]string{
		{"put", "t", "", "d:s", "v"},
		{"get", "t", ""},
		{"delete", "t", ""},
	} {
		if errs := c.fails(exitUsage, args...); !strings.Contains(errs, "row key is empty") {
			t.Errorf("%q: stderr %q", args, errs)
		}
	}
	for _, args := range [][]string{
		{"put", "t", long, "d:s", "v"},
		{"get", "t", long},
		{"delete", "t", long},
	} {
		errs := c.fails(exitUsage, args...)
		if !strings.Contains(errs, fmt.Sprintf("%d bytes, over HBase's limit of %d", maxRowKey+1, maxRowKey)) {
			t.Errorf("%s with a long key: stderr %.300q", args[0], errs)
		}
		if len(errs) > 1000 {
			t.Errorf("%s with a long key echoes it: %d bytes of stderr", args[0], len(errs))
		}
	}
	c.ok("put", "t", strings.Repeat("k", maxRowKey), "d:s", "v") // the limit itself is fine
}

func TestBadTableNamesAreRefused(t *testing.T) {
	c := newCLI(t)
	for _, name := range []string{"bad/name", "../etc", strings.Repeat("n", 100<<10), "hbase:meta",
		"two\nlines", ".hidden", "-dash", "ns:", ":t", "sp ace", "ns:a:b"} {
		errs := c.fails(exitUsage, "table", "create", "--family", "d", "--", name)
		if !strings.Contains(errs, "bad table name") {
			t.Errorf("create %.40q: stderr %.300q", name, errs)
		}
		if len(errs) > 1000 {
			t.Errorf("create of a %d-byte name echoes it: %d bytes of stderr", len(name), len(errs))
		}
	}
	for _, name := range []string{"orders", "ns1:orders_v2", "a.b-c", "T1"} {
		c.ok("table", "create", name, "--family", "d")
	}
	out := c.ok("table", "list")
	if n := strings.Count(out, "\n"); n != 6 { // header, four tables, count
		t.Errorf("table list has %d lines:\n%s", n, out)
	}
}

func TestApplyEventsDirectoryIsInputError(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	errs := c.fails(exitUsage, "apply", "--schema", filepath.Join("..", "..", "examples", "orders.yaml"), "--events", dir)
	if !strings.Contains(errs, "is a directory") || strings.Contains(errs, "run again") {
		t.Errorf("stderr %q", errs)
	}
}

// A run that refuses nothing leaves no dead-letter file; one that refuses
// something writes it.
func TestApplyDeadLetterFileOnlyWhenNeeded(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	schema := filepath.Join("..", "..", "examples", "orders.yaml")
	events := filepath.Join(dir, "ok.jsonl")
	writeFile(t, events, `{"id":"e1","entity":"order","key":"o1","version":1,"op":"upsert","state":{"orderId":"o1","customerId":"c1","status":"OPEN","placedAt":"2026-01-02T03:04:05Z","totalCents":5}}`+"\n")
	c.ok("apply", "--schema", schema, "--events", events)
	if _, err := os.Stat(events + ".dead.jsonl"); !os.IsNotExist(err) {
		t.Errorf("a run with no dead letters left %s.dead.jsonl (stat: %v)", events, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	writeFile(t, bad, "not json\n")
	if _, _, code := c.run("apply", "--schema", schema, "--events", bad); code != exitProblems {
		t.Errorf("apply of a bad line: exit %d, want %d", code, exitProblems)
	}
	b, err := os.ReadFile(bad + ".dead.jsonl")
	if err != nil || !strings.Contains(string(b), `"line":1`) {
		t.Errorf("dead letter file %q, %v", b, err)
	}
}

// An event line over the limit is named by the limit, not by the length
// of the cut line the reader kept.
func TestApplyOverlongLineSaysOver64MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 65 MiB file")
	}
	c := newCLI(t)
	dir := t.TempDir()
	events := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(events)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"id":"`)
	w.WriteString(strings.Repeat("x", 65<<20))
	w.WriteString("\"}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, code := c.run("apply", "--schema", filepath.Join("..", "..", "examples", "orders.yaml"), "--events", events); code != exitProblems {
		t.Fatalf("apply: exit %d, want %d", code, exitProblems)
	}
	dl, err := os.Open(events + ".dead.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	var rec struct{ Reason string }
	dec := json.NewDecoder(dl)
	if err := dec.Decode(&rec); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Reason, "over 64 MiB") || strings.Contains(rec.Reason, "67108865") {
		t.Errorf("reason %q", rec.Reason)
	}
}

func TestReconcileCorruptCheckpointIsInputError(t *testing.T) {
	c, schema := ordersCLI(t)
	ck := filepath.Join(t.TempDir(), "ck")
	for _, content := range []string{"garbage", "orders zz-not-hex", "\x00\xff\x01"} {
		writeFile(t, ck, content)
		errs := c.fails(exitUsage, "reconcile", "--schema", schema, "--checkpoint", ck)
		if !strings.Contains(errs, "not a reconcile checkpoint") {
			t.Errorf("checkpoint %q: stderr %q", content, errs)
		}
	}
}

// A second process on an embedded store that another has open is told so,
// with the holder's pid where the system tells it.
func TestStoreInUseByAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	c, _ := ordersCLI(t)
	schema, _ := filepath.Abs(filepath.Join("..", "..", "examples", "orders.yaml"))
	cmd := denormCmd("serve", "--schema", schema, "--store", c.url, "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"listening"`) {
				listening <- true
			}
		}
		close(listening)
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatal("serve exited before listening")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start listening")
	}
	for _, args := range [][]string{{"table", "list"}, {"query", "--schema", schema, "recent_orders", "customerId=c1"}} {
		errs := c.fails(exitProblems, args...)
		if !strings.Contains(errs, "is in use by another process") || !strings.Contains(errs, "one process at a time") {
			t.Errorf("%q: stderr %q", args, errs)
		}
		if _, err := os.Stat("/proc/locks"); err == nil {
			if want := fmt.Sprintf("(pid %d)", cmd.Process.Pid); !strings.Contains(errs, want) {
				t.Errorf("%q: stderr %q lacks %s", args, errs, want)
			}
		}
	}
}

// A slow-log file that cannot be read as one is an input error naming the
// file and where; a region server log with no slow call in it is not.
func TestDoctorUnreadableSlowLog(t *testing.T) {
	dir := t.TempDir()
	rnd := make([]byte, 4096)
	for i := range rnd {
		rnd[i] = byte(i*131 + i*i*7)
	}
	for _, tc := range []struct{ name, content, want string }{
		{"empty.json", "", "empty"},
		{"blank.log", "\n  \n", "empty"},
		{"truncated.json", `[{"method":"Scan","processing_time":15000},{"method":"Get","proc`, "line 1 column"},
		{"truncated_lines.json", "\n{\"method\":\"Get\",\"proc\n{\"method\n", "line 2"},
		{"cut.log", "2026-11-30 05:00:00,000 WARN ipc.RpcServer: (responseTooSlow): {\"call\":\"Scan\",\"processingtimems\":15\n", "line 1"},
		{"random.bin", string(rnd), "not text"},
	} {
		p := filepath.Join(dir, tc.name)
		writeFile(t, p, tc.content)
		code, out, errs := runCmd(t, "doctor", "--slowlog", p)
		if code != exitUsage || !strings.Contains(errs, tc.want) || !strings.Contains(errs, p) {
			t.Errorf("%s: exit %d, stderr %q, want exit 2 naming the file and %q\n%s", tc.name, code, errs, tc.want, out)
		}
	}
	quiet := filepath.Join(dir, "quiet.log")
	writeFile(t, quiet, "2026-11-30 05:00:00,000 INFO regionserver.HRegion: Opened orders\n")
	if code, out, errs := runCmd(t, "doctor", "--slowlog", quiet); code != exitOK {
		t.Errorf("a log with no slow calls: exit %d\n%s%s", code, out, errs)
	}
}

// hostileSchema is examples/orders.yaml with replacements made, written to
// a temporary file.
func hostileSchema(t *testing.T, repl ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(repl); i += 2 {
		if !strings.Contains(s, repl[i]) {
			t.Fatalf("orders.yaml has no %q", repl[i])
		}
		s = strings.Replace(s, repl[i], repl[i+1], 1)
	}
	p := filepath.Join(t.TempDir(), "schema.yaml")
	writeFile(t, p, s)
	return p
}

// Sizes and counts past their bounds are refused when the schema loads.
func TestSchemaValuesOverTheirBounds(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"sku: {type: string, size: 8}", "sku: {type: string, size: 999999TiB}", "over the limit of 1 PiB"},
		{"sku: {type: string, size: 8}", "sku: {type: string, size: 2GiB}", "over the limit of 1 GiB"},
		{"typical: 3", "typical: 2147483647", "out of range"},
		{"max: 200", "max: 2147483647", "out of range"},
		{"writes_per_second: 2000", "writes_per_second: 1e300", "over the limit"},
	} {
		p := hostileSchema(t, tc.from, tc.to)
		for _, cmd := range []string{"review", "cost", "hotspot"} {
			code, _, errs := runCmd(t, cmd, p)
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Errorf("%s with %q: exit %d, stderr %q, want 2 and %q", cmd, tc.to, code, errs, tc.want)
			}
		}
	}
}

// At the bounds themselves, review and cost print no overflowed figure.
func TestReviewAndCostAtTheBounds(t *testing.T) {
	p := hostileSchema(t,
		"orderId: {type: string, size: 12}", "orderId: {type: string, size: 1GiB}",
		"name: {type: string, size: 24}", "name: {type: string, size: 1GiB}",
		"max: 200", "max: 10000000",
		"typical: 3", "typical: 10000000",
		"order: 50000000", "order: 1000000000000000")
	for _, args := range [][]string{{"review", p}, {"review", p, "--format", "json"}, {"cost", p}, {"cost", p, "--format", "json"}} {
		code, out, errs := runCmd(t, args...)
		if code == exitUsage {
			t.Fatalf("%q: exit 2: %s", args, errs)
		}
		if m := negativeNumber.FindString(out); m != "" {
			t.Errorf("%q prints the negative figure %q:\n%s", args, m, out)
		}
	}
}

func TestHotspotBounds(t *testing.T) {
	schema := filepath.Join("..", "..", "examples", "orders.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--regions", "100000000"}, "more than the 10000"},
		{[]string{"--regions", "10001"}, "more than the 10000"},
		{[]string{"--samples", "100000000"}, "samples per step is more than"},
		{[]string{"--samples", "100000", "--step", "1m"}, "sampled writes"},
		{[]string{"--regions", "5000", "--step", "1s", "--duration", "1h", "--samples", "1"}, "region-steps"},
	} {
		start := time.Now()
		code, _, errs := runCmd(t, append([]string{"hotspot", schema}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%q took %v to refuse", tc.args, d)
		}
	}
}

// A workload far past the split size splits regions only up to the bound:
// the run ends, and says so.
func TestHotspotSplitsStopAtTheBound(t *testing.T) {
	p := hostileSchema(t, "max: 200", "max: 10000000", "typical: 3", "typical: 10000000")
	start := time.Now()
	var res struct {
		Regions []struct{ ID int } `json:"regions"`
		Summary struct {
			EndRegions int `json:"end_regions"`
		} `json:"summary"`
		Notes []string `json:"notes"`
	}
	code, out, errs := runCmd(t, "hotspot", p, "--table", "orders", "--format", "json", "--duration", "6h", "--step", "15m")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the run took %v", d)
	}
	capped := false
	for _, n := range res.Notes {
		capped = capped || strings.Contains(n, "stopped splitting at 10000")
	}
	if !capped {
		t.Errorf("no note of the bound; notes %q, %d regions", res.Notes, len(res.Regions))
	}
}

var negativeNumber = regexp.MustCompile(`-[0-9]{4,}`)

// doctor --log skips a line over the limit, says so, and reads on.
func TestDoctorLogLongLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "client.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("2026-11-30 05:00:01,001 INFO first\n")
	w.WriteString(strings.Repeat("x", 5<<20))
	w.WriteString(" RowTooBigException in the long line\n")
	w.WriteString("2026-11-30 05:00:02,002 WARN x: org.apache.hadoop.hbase.CallQueueTooBigException: Call queue is full on rs1:16020\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out, errs := runCmd(t, "doctor", "--log", p, "--format", "json")
	var doc struct {
		Findings []struct{ Rule string } `json:"findings"`
		Notes    []string                `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", code, err, out, errs)
	}
	if len(doc.Findings) != 1 || doc.Findings[0].Rule != "call-queue-full" {
		t.Errorf("findings %+v: want call-queue-full only", doc.Findings)
	}
	if len(doc.Notes) != 1 || !strings.Contains(doc.Notes[0], "skipped 1 of 3 lines longer than 4 MiB (the first is line 2)") {
		t.Errorf("notes %q", doc.Notes)
	}
}

// Counters no cluster reports are left out of the diagnosis, with a note.
func TestDoctorAbsurdCounters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jmx.json")
	writeFile(t, p, `{"beans":[{"name":"Hadoop:service=HBase,name=RegionServer,sub=Regions",
	"Namespace_default_table_t_region_0123456789abcdef0123456789abcdef_metric_writeRequestCount":1e308,
	"Namespace_default_table_t_region_0123456789abcdef0123456789abcdef_metric_readRequestCount":"lots",
	"Namespace_default_table_t_region_fedcba9876543210fedcba9876543210_metric_writeRequestCount":5}]}`)
	code, out, errs := runCmd(t, "doctor", "--jmx", p)
	if code == exitUsage {
		t.Fatalf("exit 2: %s", errs)
	}
	if !strings.Contains(out, "note: "+p+": left out 2 metric values") || !strings.Contains(out, "1e308 (out of range)") ||
		!strings.Contains(out, `"lots" (not a number)`) {
		t.Errorf("output lacks the note:\n%s", out)
	}
}

// A batch is held in memory whole: --batch is bounded.
func TestBatchFlagBounded(t *testing.T) {
	schema := filepath.Join("..", "..", "examples", "orders.yaml")
	events := filepath.Join(t.TempDir(), "e.jsonl")
	writeFile(t, events, "")
	for _, args := range [][]string{
		{"apply", "--schema", schema, "--events", events, "--batch", "1000000000"},
		{"apply", "--schema", schema, "--events", events, "--batch", "0"},
		{"sink", "--schema", schema, "--from", "kafka://127.0.0.1:9092/t?group=g", "--batch", "100001"},
	} {
		code, _, errs := runCmd(t, args...)
		if code != exitUsage || !strings.Contains(errs, "want 1 to 100000 events") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
	}
}
