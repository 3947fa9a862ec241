package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A table built outside denorm, described with its own key formats, is
// written, queried and reconciled like denorm's own: <device>#<epoch_ms>
// keys, a bit-reversed sequence, and a hash of two fields.
func TestKeyFormatsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "legacy.yaml")
	src := `name: legacy
entities:
  reading:
    key: [deviceId, ts]
    version: ts
    version_kind: epoch_ms
    fields: {deviceId: {type: string, size: 8}, ts: timestamp, seq: int64, v: float64, site: string}
tables:
  readings:
    role: primary
    entity: reading
    rowkey: ["text(deviceId, #)", "text(ts)"]
    families: {d: {}}
    columns: {d:v: v, d:s: seq, d:t: site}
  by_seq:
    role: index
    entity: reading
    rowkey: ["bitrev(seq)", "pad(ts, 13, |)", deviceId]
    covering: [v]
  by_site:
    role: index
    entity: reading
    rowkey: ["hash(site, deviceId, 2)", site, deviceId, ts]
    covering: [v]
queries:
  device: {table: readings, by: [deviceId], limit: 10}
  seq: {table: by_seq, by: [seq], limit: 10}
  site_device: {table: by_site, by: [site, deviceId], limit: 10}
`
	var events strings.Builder
	for i := 1; i <= 6; i++ {
		ts := 1764547200000 + i
		fmt.Fprintf(&events, `{"entity":"reading","key":{"deviceId":"dev%d","ts":%d},"version":%d,"state":{"deviceId":"dev%d","ts":%d,"seq":%d,"v":1.5,"site":"s%d"}}`+"\n",
			i%2, ts, ts, i%2, ts, i, i%2)
	}
	evPath := filepath.Join(dir, "ev.jsonl")
	if err := os.WriteFile(schema, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evPath, []byte(events.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	c.ok("apply", "--schema", schema, "--events", evPath)
	// The primary rows carry the legacy key bytes.
	if out := c.ok("scan", "readings", "--limit", "1"); !strings.Contains(out, "dev0#1764547200002") {
		t.Errorf("primary keys are not <device>#<epoch_ms>:\n%s", out)
	}
	var doc queryDoc
	c.json(&doc, "query", "--schema", schema, "device", "deviceId=dev1", "--format", "json")
	if len(doc.Rows) != 3 {
		t.Errorf("device dev1: %d rows, want 3: %v", len(doc.Rows), doc.Rows)
	}
	doc = queryDoc{}
	c.json(&doc, "query", "--schema", schema, "seq", "seq=4", "--format", "json")
	if len(doc.Rows) != 1 || doc.Rows[0]["deviceId"] != "dev0" {
		t.Errorf("seq 4: %v", doc.Rows)
	}
	doc = queryDoc{}
	c.json(&doc, "query", "--schema", schema, "site_device", "site=s1", "deviceId=dev1", "--format", "json")
	if len(doc.Rows) != 3 {
		t.Errorf("site s1 device dev1: %d rows, want 3", len(doc.Rows))
	}
	c.ok("reconcile", "--schema", schema, "--dry-run")
}
