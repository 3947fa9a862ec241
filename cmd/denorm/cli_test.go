package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/store"
)

// cli drives the whole command in-process against one embedded store.
type cli struct {
	t   *testing.T
	url string
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	return &cli{t: t, url: "pebble://" + filepath.ToSlash(filepath.Join(t.TempDir(), "data"))}
}

// run returns stdout, stderr and the exit code.
func (c *cli) run(args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"--store", c.url}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("denorm %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// fails runs a command that must exit with code and say something on stderr.
func (c *cli) fails(code int, args ...string) string {
	c.t.Helper()
	out, errs, got := c.run(args...)
	if got != code {
		c.t.Fatalf("denorm %s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errs)
	}
	if strings.TrimSpace(errs) == "" {
		c.t.Fatalf("denorm %s: exit %d with nothing on stderr", strings.Join(args, " "), got)
	}
	return errs
}

func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	out := c.ok(append(args, "--format", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("denorm %s --format json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// keys lists the row keys of a JSON rows document, decoded from base64 and
// checked against the printable form.
func keys(t *testing.T, doc jsonRowsDoc) []string {
	t.Helper()
	var out []string
	for _, r := range doc.Rows {
		b, err := base64.StdEncoding.DecodeString(r.KeyBase64)
		if err != nil {
			t.Fatalf("key_base64 %q: %v", r.KeyBase64, err)
		}
		if p, err := store.ParsePrintable(r.Key); err != nil || !bytes.Equal(p, b) {
			t.Fatalf("key %q and key_base64 %q disagree", r.Key, r.KeyBase64)
		}
		out = append(out, string(b))
	}
	if doc.Count != len(doc.Rows) {
		t.Fatalf("count %d but %d rows", doc.Count, len(doc.Rows))
	}
	return out
}

func TestTableLifecycle(t *testing.T) {
	c := newCLI(t)
	out := c.ok("table", "create", "orders",
		"--family", "d:versions=3,ttl=7d,compression=SNAPPY,encoding=FAST_DIFF,bloom=ROW",
		"--family", "i", "--split", "m", "--split", `\x00a`, "--split", "c")
	if !strings.Contains(out, "created table orders: 2 families, 4 regions") {
		t.Fatalf("create said %q", out)
	}
	c.ok("table", "create", "events", "--family", "e")

	var desc jsonTable
	c.json(&desc, "table", "describe", "orders")
	if desc.Name != "orders" || len(desc.Families) != 2 {
		t.Fatalf("describe: %+v", desc)
	}
	d := desc.Families[0]
	if d.Name != "d" || d.Versions != 3 || d.TTLSeconds != 7*86400 || d.Compression != "SNAPPY" ||
		d.DataBlockEncoding != "FAST_DIFF" || d.BloomFilter != "ROW" {
		t.Fatalf("family d described as %+v", d)
	}
	if want := []string{`\x00a`, "c", "m"}; !slices.Equal(desc.SplitKeys, want) {
		t.Fatalf("split keys %q, want %q (sorted)", desc.SplitKeys, want)
	}
	if len(desc.Regions) != 4 || desc.Regions[0].Start != "" || desc.Regions[1].Start != `\x00a` || desc.Regions[3].End != "" {
		t.Fatalf("regions %+v", desc.Regions)
	}
	text := c.ok("table", "describe", "orders")
	for _, want := range []string{"Table orders", "{NAME => 'd', VERSIONS => '3', TTL => '604800 SECONDS (7 DAYS)', COMPRESSION => 'SNAPPY'", "2 column families"} {
		if !strings.Contains(text, want) {
			t.Errorf("describe text lacks %q:\n%s", want, text)
		}
	}

	var list struct{ Tables []string }
	c.json(&list, "table", "list")
	if !slices.Equal(list.Tables, []string{"events", "orders"}) {
		t.Fatalf("table list = %q", list.Tables)
	}
	if out := c.ok("table", "list"); out != "TABLE\nevents\norders\n2 row(s)\n" {
		t.Fatalf("table list text = %q", out)
	}

	c.fails(exitUsage, "table", "create", "orders", "--family", "d")
	c.ok("table", "drop", "events")
	c.json(&list, "table", "list")
	if !slices.Equal(list.Tables, []string{"orders"}) {
		t.Fatalf("after drop, table list = %q", list.Tables)
	}
	c.fails(exitUsage, "table", "drop", "events")
	c.fails(exitUsage, "table", "describe", "events")
}

func TestSplitsFile(t *testing.T) {
	c := newCLI(t)
	file := filepath.Join(t.TempDir(), "splits.txt")
	writeFile(t, file, "# three splits\nk\n\\x80\nc\n")
	c.ok("table", "create", "t", "--family", "f", "--splits-file", file, "--split", "x")
	var desc jsonTable
	c.json(&desc, "table", "describe", "t")
	if want := []string{"c", "k", "x", `\x80`}; !slices.Equal(desc.SplitKeys, want) {
		t.Fatalf("split keys %q, want %q", desc.SplitKeys, want)
	}
	c.fails(exitUsage, "table", "create", "u", "--family", "f", "--splits-file", filepath.Join(t.TempDir(), "missing"))
	c.fails(exitUsage, "table", "create", "u", "--family", "f", "--splits-file", file, "--split", "k")
}

func TestPutGetDelete(t *testing.T) {
	c := newCLI(t)
	c.ok("table", "create", "t", "--family", "d:versions=3", "--family", "i")
	for ts := 1; ts <= 3; ts++ {
		c.ok("put", "t", "r1", "d:s", fmt.Sprintf("v%d", ts), "--ts", fmt.Sprint(ts))
	}
	c.ok("put", "t", "r1", `i:\x00\x01`, `bin\x00\xFF\x5C`, "--ts", "7")

	out := c.ok("get", "t", "r1")
	for _, want := range []string{"COLUMN", " d:s ", "timestamp=3, value=v3", ` i:\x00\x01 `, `timestamp=7, value=bin\x00\xFF\x5C`, "1 row(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("get output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "value=v2") {
		t.Errorf("get without --versions printed an old version:\n%s", out)
	}

	var doc jsonRowsDoc
	c.json(&doc, "get", "t", "r1", "--column", "d:s", "--versions", "2")
	if len(doc.Rows) != 1 || len(doc.Rows[0].Cells) != 2 {
		t.Fatalf("get --versions 2: %+v", doc)
	}
	if c0, c1 := doc.Rows[0].Cells[0], doc.Rows[0].Cells[1]; c0.Timestamp != 3 || c0.Value != "v3" || c1.Timestamp != 2 || c1.Value != "v2" {
		t.Fatalf("versions newest first: %+v", doc.Rows[0].Cells)
	}

	// Exact bytes survive both JSON forms.
	doc = jsonRowsDoc{}
	c.json(&doc, "get", "t", "r1", "--column", "i")
	cell := doc.Rows[0].Cells[0]
	val, _ := base64.StdEncoding.DecodeString(cell.ValueBase64)
	qual, _ := base64.StdEncoding.DecodeString(cell.QualifierBase64)
	if !bytes.Equal(val, []byte("bin\x00\xFF\\")) || !bytes.Equal(qual, []byte{0, 1}) || cell.Family != "i" {
		t.Fatalf("binary cell came back as %+v", cell)
	}
	if p, _ := store.ParsePrintable(cell.Value); !bytes.Equal(p, val) {
		t.Fatalf("printable value %q does not parse back to %q", cell.Value, val)
	}

	// A missing row is not an error.
	if out := c.ok("get", "t", "nope"); !strings.Contains(out, "0 row(s)") {
		t.Fatalf("get of a missing row: %q", out)
	}
	doc = jsonRowsDoc{}
	c.json(&doc, "get", "t", "nope")
	if doc.Count != 0 || len(doc.Rows) != 0 || doc.Table != "t" {
		t.Fatalf("get json of a missing row: %+v", doc)
	}

	// One version without --ts removes the newest one.
	c.ok("delete", "t", "r1", "d:s")
	cellsOf := func(args ...string) []jsonCell {
		var d jsonRowsDoc
		c.json(&d, append([]string{"get", "t", "r1"}, args...)...)
		if len(d.Rows) == 0 {
			return nil
		}
		return d.Rows[0].Cells
	}
	if cs := cellsOf("--column", "d:s", "--versions", "3"); len(cs) != 2 || cs[0].Timestamp != 2 {
		t.Fatalf("after deleting the newest version: %+v", cs)
	}
	c.ok("delete", "t", "r1", "d:s", "--ts", "1")
	if cs := cellsOf("--column", "d:s", "--versions", "3"); len(cs) != 1 || cs[0].Timestamp != 2 {
		t.Fatalf("after deleting version 1: %+v", cs)
	}
	c.ok("delete", "t", "r1", "d:s", "--all-versions", "--ts", "5")
	if cs := cellsOf("--column", "d"); len(cs) != 0 {
		t.Fatalf("after deleting all versions: %+v", cs)
	}
	// The marker at 5 masks a later put at 4 but not one at 6, as in HBase.
	c.ok("put", "t", "r1", "d:s", "late", "--ts", "4")
	c.ok("put", "t", "r1", "d:s", "new", "--ts", "6")
	if cs := cellsOf("--column", "d", "--versions", "3"); len(cs) != 1 || cs[0].Value != "new" {
		t.Fatalf("delete marker at 5 should mask ts 4 and keep ts 6: %+v", cs)
	}
	c.ok("delete", "t", "r1", "i")
	if cs := cellsOf("--column", "i"); len(cs) != 0 {
		t.Fatalf("after deleting family i: %+v", cs)
	}
	c.ok("delete", "t", "r1")
	if cs := cellsOf(); len(cs) != 0 {
		t.Fatalf("after deleting the row: %+v", cs)
	}

	// Without --ts, put uses the store's clock.
	c.ok("put", "t", "r2", "d:s", "now")
	if cs := (func() []jsonCell {
		var d jsonRowsDoc
		c.json(&d, "get", "t", "r2")
		return d.Rows[0].Cells
	})(); cs[0].Timestamp < 1_600_000_000_000 {
		t.Fatalf("put without --ts stamped %d, want the clock in ms", cs[0].Timestamp)
	}
}

func TestScan(t *testing.T) {
	c := newCLI(t)
	c.ok("table", "create", "t", "--family", "d", "--split", "b")
	rows := []string{"a", "a1", "a2", "a3", "a\xff", "b", "b1", "\x00z"}
	for i, r := range rows {
		c.ok("put", "t", store.Printable([]byte(r)), "d:v", fmt.Sprint(i), "--ts", "1")
	}
	scanKeys := func(args ...string) []string {
		var d jsonRowsDoc
		c.json(&d, append([]string{"scan", "t"}, args...)...)
		return keys(t, d)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"\x00z", "a", "a1", "a2", "a3", "a\xff", "b", "b1"}},
		{[]string{"--prefix", "a"}, []string{"a", "a1", "a2", "a3", "a\xff"}},
		{[]string{"--prefix", "a", "--limit", "2"}, []string{"a", "a1"}},
		{[]string{"--prefix", "a", "--reverse"}, []string{"a\xff", "a3", "a2", "a1", "a"}},
		{[]string{"--prefix", "a", "--reverse", "--limit", "2"}, []string{"a\xff", "a3"}},
		{[]string{"--prefix", `a\xFF`, "--reverse"}, []string{"a\xff"}},
		{[]string{"--prefix", "zz"}, nil},
		{[]string{"--start", "a2", "--stop", "b1"}, []string{"a2", "a3", "a\xff", "b"}},
		{[]string{"--start", "b", "--stop", "a1", "--reverse"}, []string{"b", "a\xff", "a3", "a2"}},
		{[]string{"--reverse", "--limit", "3"}, []string{"b1", "b", "a\xff"}},
	} {
		if got := scanKeys(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("scan %q = %q, want %q", tc.args, got, tc.want)
		}
	}

	out := c.ok("scan", "t", "--prefix", "a", "--limit", "2")
	want := "ROW                           COLUMN+CELL\n" +
		" a                            column=d:v, timestamp=1, value=0\n" +
		" a1                           column=d:v, timestamp=1, value=1\n" +
		"2 row(s)\n"
	if out != want {
		t.Errorf("scan text output:\n%s\nwant:\n%s", out, want)
	}
}

// TestScanPrefixRandom checks --prefix, forward and reverse, with and
// without --limit, against a sorted list, on random binary keys.
func TestScanPrefixRandom(t *testing.T) {
	seed := uint64(20261130)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := filepath.Join(t.TempDir(), "data")
	url := "pebble://" + filepath.ToSlash(dir)
	alphabet := []byte{0x00, 0x01, 'a', 'b', 0xFE, 0xFF}
	randKey := func(max int) []byte {
		k := make([]byte, 1+rng.IntN(max))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return k
	}

	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "d"}},
		SplitKeys: [][]byte{{'a'}, {0xFE}}}); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for range 300 {
		k := randKey(4)
		set[string(k)] = true
		m := store.RowMutation{Row: k, Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("q"), Timestamp: 1, Value: k}}}
		if err := st.Mutate(ctx, "t", m); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	sorted := make([]string, 0, len(set))
	for k := range set {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)

	c := &cli{t: t, url: url}
	for i := range 40 {
		p := randKey(3)
		if i%5 == 0 {
			p = []byte{alphabet[len(alphabet)-1], 0xFF} // next(p) does not exist
		}
		var want []string
		for _, k := range sorted {
			if strings.HasPrefix(k, string(p)) {
				want = append(want, k)
			}
		}
		limit := rng.IntN(4)
		reverse := rng.IntN(2) == 1
		args := []string{"scan", "t", "--prefix", store.Printable(p), "--limit", fmt.Sprint(limit)}
		if reverse {
			args = append(args, "--reverse")
			slices.Reverse(want)
		}
		if limit > 0 && len(want) > limit {
			want = want[:limit]
		}
		var d jsonRowsDoc
		c.json(&d, args...)
		if got := keys(t, d); !slices.Equal(got, want) {
			t.Fatalf("seed %d: %q = %q, want %q", seed, args, got, want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	c := newCLI(t)
	c.ok("table", "create", "t", "--family", "d")
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"table"},
		{"table", "bogus"},
		{"get", "t"},
		{"get", "t", "r", "extra"},
		{"get", "t", `r\x4`},
		{"get", "t", `r\xZZ`},
		{"get", "t", "r", "--column", ":q"},
		{"get", "t", "r", "--versions", "0"},
		{"get", "t", "r", "--format", "xml"},
		{"get", "missing", "r"},
		{"scan", "t", "--bogus"},
		{"scan", "t", "--prefix", "a", "--start", "b"},
		{"scan", "t", "--limit", "-1"},
		{"scan", "t", "--start", `\x`},
		{"scan", "missing"},
		{"put", "t", "r", "d", "v"},
		{"put", "t", "r", "x:q", "v", "--ts", "1"},
		{"put", "t", "r", "d:q", `v\x1`},
		{"put", "t", "r", "d:q", "v", "--ts", "-1"},
		{"put", "t", "r", "d:q", "v", "--ts", "soon"},
		{"delete", "t"},
		{"delete", "t", "r", "--all-versions"},
		{"table", "create", "u"},
		{"table", "create", "u", "--family", "d:versions=none"},
		{"table", "create", "u", "--family", "d", "--family", "d"},
		{"table", "create", "u", "--family", "d", "--split", ""},
		{"version", "extra"},
		{"--store", "nosuch://x", "table", "list"},
	} {
		var out, errb bytes.Buffer
		args = append([]string{"--store", c.url}, args...)
		if code := run(context.Background(), args, &out, &errb); code != exitUsage {
			t.Errorf("denorm %q: exit %d, want %d; stderr: %s", args, code, exitUsage, errb.String())
		} else if errb.Len() == 0 {
			t.Errorf("denorm %q: exit 2 with nothing on stderr", args)
		}
	}
}

func TestStoreFromEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env-data")
	t.Setenv(storeEnv, "pebble://"+filepath.ToSlash(dir))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"table", "create", "e", "--family", "f"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"table", "list"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "\ne\n") {
		t.Fatalf("table list with %s set: exit %d, %q", storeEnv, code, out.String())
	}
}

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "denorm ") || !strings.Contains(out.String(), "go1.") {
		t.Fatalf("version printed %q", out.String())
	}
}

func TestHelpHasExamples(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Hidden || cmd.Name() == "help" || cmd.Name() == "completion" {
			return // cobra's own
		}
		if cmd.Long == "" || cmd.Example == "" {
			t.Errorf("%s: --help needs Long text and Examples", cmd.CommandPath())
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

// TestInterrupted stands in for SIGINT: main cancels the context run gets.
func TestInterrupted(t *testing.T) {
	c := newCLI(t)
	c.ok("table", "create", "t", "--family", "d")
	c.ok("put", "t", "r", "d:q", "v", "--ts", "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"--store", c.url, "scan", "t"}, &out, &errb)
	if code != exitProblems || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("scan with a cancelled context: exit %d, stderr %q; want exit 1 and \"interrupted\"", code, errb.String())
	}
}
