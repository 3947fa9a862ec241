package main

import (
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"slices"
	"testing"
	"time"
)

// hbaseURL returns the real HBase the test environment started. Without one
// the test skips, except under CI, which must never skip it silently.
func hbaseURL(t *testing.T) string {
	t.Helper()
	return testenv.HBaseURL(t)
}

// TestHBaseCommands runs the same commands as the embedded tests against real
// HBase: the command must not depend on which backend it talks to.
func TestHBaseCommands(t *testing.T) {
	c := &cli{t: t, url: hbaseURL(t)}
	table := fmt.Sprintf("denorm_cli_%d", time.Now().UnixNano())
	c.ok("table", "create", table, "--family", "d:versions=3,compression=NONE,bloom=ROW", "--family", "i", "--split", "b")
	t.Cleanup(func() { c.run("table", "drop", table) })

	var desc jsonTable
	c.json(&desc, "table", "describe", table)
	if len(desc.Families) != 2 || desc.Families[0].Versions != 3 || !slices.Equal(desc.SplitKeys, []string{"b"}) || len(desc.Regions) != 2 {
		t.Fatalf("describe on HBase: %+v", desc)
	}
	for i, r := range []string{"a", "a1", `a\xFF`, "b", "b1"} {
		c.ok("put", table, r, "d:v", fmt.Sprint(i), "--ts", "10")
	}
	c.ok("put", table, "a1", "d:v", "old", "--ts", "5")
	c.ok("put", table, "a1", `i:\x00`, `\x00\x01`, "--ts", "10")

	var doc jsonRowsDoc
	c.json(&doc, "get", table, "a1", "--versions", "2")
	if len(doc.Rows) != 1 || len(doc.Rows[0].Cells) != 3 || doc.Rows[0].Cells[1].Value != "old" || doc.Rows[0].Cells[2].Value != `\x00\x01` {
		t.Fatalf("get on HBase: %+v", doc)
	}
	scan := func(args ...string) []string {
		var d jsonRowsDoc
		c.json(&d, append([]string{"scan", table}, args...)...)
		return keys(t, d)
	}
	if got, want := scan("--prefix", "a"), []string{"a", "a1", "a\xff"}; !slices.Equal(got, want) {
		t.Errorf("scan --prefix a on HBase = %q, want %q", got, want)
	}
	if got, want := scan("--prefix", "a", "--reverse", "--limit", "2"), []string{"a\xff", "a1"}; !slices.Equal(got, want) {
		t.Errorf("scan --prefix a --reverse --limit 2 on HBase = %q, want %q", got, want)
	}
	c.ok("delete", table, "a1", "d:v", "--all-versions", "--ts", "10")
	doc = jsonRowsDoc{}
	c.json(&doc, "get", table, "a1", "--column", "d")
	if doc.Count != 0 {
		t.Errorf("after delete --all-versions on HBase: %+v", doc)
	}
	c.fails(exitUsage, "get", table+"_missing", "r")
}
