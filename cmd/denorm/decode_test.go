package main

import (
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// decodedDoc is the part of scan's JSON that --schema adds.
type decodedDoc struct {
	Rows []struct {
		Key       string `json:"key"`
		KeyBase64 string `json:"key_base64"`
		Cells     []struct {
			Qualifier string `json:"qualifier"`
			Value     string `json:"value"`
			Decoded   *struct {
				Column   string         `json:"column"`
				Kind     string         `json:"kind"`
				Field    string         `json:"field"`
				ChildKey map[string]any `json:"child_key"`
				Entity   map[string]any `json:"entity"`
				Value    any            `json:"value"`
				Error    string         `json:"error"`
			} `json:"decoded"`
		} `json:"cells"`
		Decoded *struct {
			Parts []struct {
				Part, Name, Kind, Field, Type string
				Value                         any
			} `json:"parts"`
			Error string `json:"error"`
		} `json:"decoded"`
	} `json:"rows"`
	Count int `json:"count"`
}

// One event applied to a schema whose primary key has a part of every
// kind (salt, hash, day, string, integer, reverse, timestamp), a template
// column, an index and a bucketed exact counter; get and scan with --schema
// read each back by name and declared type, and --raw prints what they
// print without it.
func TestScanSchemaDecodes(t *testing.T) {
	c := newCLI(t)
	schemaFile := filepath.Join("testdata", "key_kinds.yaml")
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	writeFile(t, events, `{"id":"e1","entity":"reading","key":"r1","version":3,"state":{"id":"r1","site":7,`+
		`"at":"2026-10-04T10:00:00Z","ts":"2026-10-04T10:00:01.5Z","temp":21.5,`+
		`"probes":[{"n":1,"label":"inlet"},{"n":2,"label":"out let"}]}}`+"\n")
	c.ok("apply", "--schema", schemaFile, "--events", events, "--from-start")

	var doc decodedDoc
	c.json(&doc, "scan", "readings", "--schema", schemaFile)
	if doc.Count != 1 || doc.Rows[0].Decoded == nil {
		t.Fatalf("want one decoded row, got %+v", doc)
	}
	row := doc.Rows[0]
	raw, err := base64.StdEncoding.DecodeString(row.KeyBase64)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name, kind string
		value      any
	}
	// The salt and hash are checked against the key's own bytes: the
	// first byte is the bucket, the next two the hash prefix.
	wants := []want{
		{"salt", "salt", float64(raw[0])},
		{"hash", "hash", hex.EncodeToString(raw[1:3])},
		{"day", "day", "2026-10-04"},
		{"id", "string", "r1"},
		{"site", "int32", float64(7)},
		{"ts", "reverse", "2026-10-04T10:00:01.5Z"},
		{"at", "timestamp", "2026-10-04T10:00:00Z"},
	}
	parts := row.Decoded.Parts
	if len(parts) != len(wants) || row.Decoded.Error != "" {
		t.Fatalf("decoded key %+v (error %q), want %d parts", parts, row.Decoded.Error, len(wants))
	}
	for i, w := range wants {
		p := parts[i]
		if p.Name != w.name || p.Kind != w.kind || p.Value != w.value {
			t.Errorf("part %d (%s): name %q kind %q value %v, want %q %q %v", i, p.Part, p.Name, p.Kind, p.Value, w.name, w.kind, w.value)
		}
	}
	if parts[0].Value.(float64) >= 8 {
		t.Errorf("salt %v is not below its 8 buckets", parts[0].Value)
	}
	if parts[5].Type != "timestamp" || parts[4].Type != "int32" {
		t.Errorf("declared types: %q, %q", parts[5].Type, parts[4].Type)
	}

	elements := map[float64]map[string]any{}
	for _, cell := range row.Cells {
		d := cell.Decoded
		if d == nil || d.Error != "" {
			t.Fatalf("cell %s not decoded: %+v", cell.Qualifier, d)
		}
		switch d.Column {
		case "d:t":
			if d.Kind != "field" || d.Field != "temp" || d.Value != 21.5 {
				t.Errorf("d:t decoded as %+v", d)
			}
		case "d:p{n}":
			elements[d.ChildKey["n"].(float64)] = d.Value.(map[string]any)
		case "pending":
			// A creation deletes nothing; its record names where its
			// event was: the file's first line.
			v, ok := d.Value.(map[string]any)
			if !ok || len(v["refs"].([]any)) != 0 || v["offset"] != float64(0) || len(v["stream"].(string)) != 16 {
				t.Errorf("pending record decoded as %+v", d)
			}
		default:
			t.Errorf("unexpected cell %+v", d)
		}
	}
	if len(elements) != 2 || elements[1]["label"] != "inlet" || elements[2]["label"] != "out let" || elements[2]["n"] != float64(2) {
		t.Errorf("probes decoded as %v", elements)
	}

	// Text: the key by its parts, the items as their fields.
	text := c.ok("scan", "readings", "--schema", schemaFile, "--limit", "1")
	at := time.Date(2026, 10, 4, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)
	for _, s := range []string{
		"ROW salt=", " hash=" + hex.EncodeToString(raw[1:3]), " day=2026-10-04 id=r1 site=7 ts=2026-10-04T10:00:01.5Z at=" + at,
		"d:p{n=1} (probes)", "value={n=1 label=inlet}", `value={n=2 label="out let"}`, "d:t (temp)", "value=21.5", "1 row(s)",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("scan text lacks %q:\n%s", s, text)
		}
	}

	// get reads the same row the same way.
	getText := c.ok("get", "readings", rawKeyArg(raw), "--schema", schemaFile)
	if !strings.Contains(getText, "day=2026-10-04 id=r1 site=7") || !strings.Contains(getText, "value={n=1 label=inlet}") {
		t.Errorf("get --schema:\n%s", getText)
	}

	// The index's ref points at the primary key, read as its parts; the
	// counter's cell is a number from one entity, its bucket shown as such.
	idx := c.ok("scan", "readings_by_site", "--schema", schemaFile)
	if !strings.Contains(idx, "ROW site=7 id=r1") || !strings.Contains(idx, "ref (to readings)") ||
		!strings.Contains(idx, "value=salt=") || !strings.Contains(idx, "id=r1 site=7 ts=") {
		t.Errorf("index scan:\n%s", idx)
	}
	var counter decodedDoc
	c.json(&counter, "scan", "readings_per_day", "--schema", schemaFile)
	if counter.Count != 1 {
		t.Fatalf("counter rows: %d", counter.Count)
	}
	cp := counter.Rows[0].Decoded.Parts
	if len(cp) != 3 || cp[0].Kind != "day" || cp[1].Name != "site" || cp[2].Kind != "bucket" || cp[2].Value.(float64) > 1 {
		t.Errorf("counter key %+v", cp)
	}
	cc := counter.Rows[0].Cells[0].Decoded
	if cc.Kind != "counter" || cc.Column != "c:n" || cc.Value != float64(1) || cc.Entity["id"] != "r1" {
		t.Errorf("counter cell %+v", cc)
	}

	// --raw is today's form, byte for byte.
	plain := c.ok("scan", "readings")
	if got := c.ok("scan", "readings", "--schema", schemaFile, "--raw"); got != plain {
		t.Errorf("--raw:\n%s\nwithout --schema:\n%s", got, plain)
	}
	if got := c.ok("scan", "readings", "--schema", schemaFile, "--raw", "--format", "json"); strings.Contains(got, "decoded") {
		t.Errorf("--raw JSON has decoded fields: %s", got)
	}
	c.fails(exitUsage, "scan", "no_such_table", "--schema", schemaFile)
}

// rawKeyArg writes key bytes the way get takes them: \xNN for every byte.
func rawKeyArg(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteString(`\x`)
		s.WriteString(strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return s.String()
}

// The writer's own cells read as what they mean: a locator's row names the
// order's primary row by its parts, and a reference row says whether the
// product was last upserted or deleted.
func TestScanSchemaDecodesWriterCells(t *testing.T) {
	c := newCLI(t)
	events := filepath.Join(t.TempDir(), "ev.jsonl")
	writeFile(t, events, `{"entity":"order","key":"o1","version":1,"state":{"orderId":"o1","customerId":"c7","status":"OPEN","placedAt":"2026-10-04T10:00:00Z","items":[{"line":1,"sku":"S","quantity":1}]}}`+"\n"+
		`{"entity":"product","key":"S","version":4,"op":"delete"}`+"\n")
	c.ok("apply", "--schema", "../../examples/orders.yaml", "--events", events)
	out := c.ok("scan", "order_locations", "--schema", "../../examples/orders.yaml")
	if !strings.Contains(out, "location (orders)") || !strings.Contains(out, "customerId=c7 placedAt=2026-10-04T10:00:00Z orderId=o1") {
		t.Fatalf("locator row:\n%s", out)
	}
	out = c.ok("scan", "orders_by_product", "--schema", "../../examples/orders.yaml")
	if !strings.Contains(out, "reference state") || !strings.Contains(out, "timestamp=4, value=deleted") {
		t.Fatalf("reference row:\n%s", out)
	}
}
