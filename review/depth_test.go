package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// depthBase is a clean client and ops section for the designs below, so
// that each shows only the rule under test.
const depthBase = `client: {rpc_timeout: 2s, operation_timeout: 10s, write_buffer: 4MiB, connection: per_process, batching: buffered}
ops: {major_compaction: manual, durability: sync_wal}
`

func findingsOf(rep Report, rule string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// A print spooler keeps jobs in a table keyed by submission time and takes
// the oldest ten: a queue by its query's shape, rated as the catalogue
// rates a queue. Taking the newest ten instead is a "latest" view.
func TestQueueFromQueryShapeIsAnError(t *testing.T) {
	src := `name: spool
entities:
  job:
    key: jobId
    version: version
    fields: {jobId: {type: string, size: 16}, submittedAt: timestamp, printer: {type: string, size: 8}}
tables:
  jobs_by_time:
    role: primary
    entity: job
    rowkey: [submittedAt, jobId]
    families: {d: {}}
    columns: {d:p: printer}
queries:
  next_jobs: {table: jobs_by_time, limit: 10, rate: 5/s, latency: 100ms}
` + depthBase
	got := findingsOf(reviewYAML(t, "spool", src), "table-as-queue")
	if len(got) != 1 || got[0].Severity != SeverityError || got[0].Query != "next_jobs" {
		t.Fatalf("want one table-as-queue error on next_jobs, got %v", got)
	}
	newest := strings.Replace(src, "limit: 10,", "limit: 10, direction: reverse,", 1)
	if got := findingsOf(reviewYAML(t, "spool-newest", newest), "table-as-queue"); len(got) != 0 {
		t.Errorf("a reverse scan takes the newest rows, not a queue's head: %v", got)
	}
}

// A news site spreads articles by a hash of their section, but there are
// twelve sections: twelve leading bytes, twelve hot regions. The same hash
// over the article id is fine, and so is a salt with fewer buckets than
// sections.
func TestHashOfLowCardinalityFieldIsAHotPrefix(t *testing.T) {
	src := func(lead string) string {
		return `name: news
entities:
  article:
    key: articleId
    version: version
    fields: {articleId: {type: string, size: 12}, section: {type: string, size: 8}, publishedAt: timestamp, title: {type: string, size: 60}}
tables:
  articles:
    role: primary
    entity: article
    rowkey: [articleId]
    families: {d: {}}
    columns: {d:t: title, d:s: section, d:p: publishedAt}
  articles_by_section:
    role: index
    entity: article
    rowkey: ["` + lead + `", section, "reverse(publishedAt)", articleId]
    covering: [title]
    families: {d: {}}
workload:
  writes_per_second: 50
  keys:
    article.section: {distribution: uniform, cardinality: 12}
` + depthBase
	}
	for lead, want := range map[string]bool{
		"hash(section, 1)":   true,  // 12 of 256 leading bytes
		"salt(section, 32)":  true,  // 12 of 32 buckets
		"hash(articleId, 1)": false, // the id fills all 256
		"salt(section, 8)":   false, // 12 values fill 8 buckets
	} {
		got := findingsOf(reviewYAML(t, "news", src(lead)), "index-hot-prefix")
		if want && (len(got) != 1 || got[0].Severity != SeverityWarning || !strings.Contains(got[0].Message, "at most 12")) {
			t.Errorf("%s: want one index-hot-prefix warning naming 12 values, got %v", lead, got)
		}
		if !want && len(got) != 0 {
			t.Errorf("%s: want no index-hot-prefix, got %v", lead, got)
		}
	}
}

// A hashed counter of a weighted field is as hot as its commonest value.
func TestSaltedCounterOfFewValuesStaysHot(t *testing.T) {
	src := `name: votes
entities:
  vote:
    key: voteId
    version: version
    fields: {voteId: {type: string, size: 16}, choice: {type: string, size: 4}}
tables:
  votes:
    role: primary
    entity: vote
    rowkey: ["hash(voteId, 1)", voteId]
    families: {d: {}}
    columns: {d:c: choice}
  tally:
    role: counter
    entity: vote
    rowkey: ["salt(choice, 16)", choice]
    mode: exact
    add: {c:n: 1}
    families: {c: {}}
workload:
  writes_per_second: 5000
  keys:
    vote.choice: {distribution: weighted, values: {yes: 0.6, no: 0.4}}
` + depthBase
	got := findingsOf(reviewYAML(t, "votes", src), "counter-hot-row")
	if len(got) != 1 {
		t.Fatalf("want counter-hot-row on tally (3,000 increments/s on the yes row whatever the salt), got %v", got)
	}
	if !strings.Contains(got[0].Message, "3000") {
		t.Errorf("want the busiest row at about 3000 increments/s: %s", got[0].Message)
	}
}

// A thermostat fleet's settings table: 100,000 rows of a few dozen bytes
// under a 256-bucket salt is 256 regions of a few kilobytes each.
func TestTooManyTinyRegions(t *testing.T) {
	src := func(salt string, n string) string {
		return `name: settings
entities:
  setting:
    key: thermostatId
    version: version
    fields: {thermostatId: {type: string, size: 12}, target: int32}
tables:
  settings:
    role: primary
    entity: setting
    rowkey: ["` + salt + `", thermostatId]
    families: {d: {}}
    columns: {d:t: target}
workload:
  entities: ` + n + `
` + depthBase
	}
	got := findingsOf(reviewYAML(t, "settings", src("salt(thermostatId, 256)", "100000")), "region-size")
	if len(got) != 1 || got[0].Severity != SeverityWarning || !strings.Contains(got[0].Message, "256 regions") {
		t.Fatalf("want one region-size warning for 256 tiny regions, got %v", got)
	}
	if got := findingsOf(reviewYAML(t, "settings-few", src("salt(thermostatId, 4)", "100000")), "region-size"); len(got) != 1 || got[0].Severity != SeverityInfo {
		t.Errorf("4 tiny regions: want an info note, got %v", got)
	}
	if got := findingsOf(reviewYAML(t, "settings-big", src("salt(thermostatId, 256)", "2000000000")), "region-size"); len(got) != 0 {
		t.Errorf("2 billion rows fill 256 regions: want nothing, got %v", got)
	}
}

// "Delayed shipments today" on a day-led key without the delay in it reads
// every shipment of the day; graded by the rows it reads, it is not a note.
func TestFilteredScanGradedByRowsRead(t *testing.T) {
	src := func(query, extra string) string {
		return `name: shipping
entities:
  shipment:
    key: shipmentId
    version: version
    fields: {shipmentId: {type: string, size: 14}, shippedAt: timestamp, delayed: bool, carrier: {type: string, size: 6}}
tables:
  shipments:
    role: primary
    entity: shipment
    rowkey: ["hash(shipmentId, 1)", shipmentId]
    presplit: 16
    families: {d: {}}
    columns: {d:s: shippedAt, d:d: delayed, d:c: carrier}
  shipments_by_day:
    role: index
    entity: shipment
    rowkey: ["day(shippedAt)", shipmentId]
    covering: [carrier]
    families: {d: {}}
` + extra + `queries:
` + query + `workload:
  writes_per_second: 900
  keys:
    shipment.delayed: {distribution: weighted, values: {"true": 0.002, "false": 0.998}}
` + depthBase
	}
	cases := []struct {
		name, query, extra string
		want               Severity // "" for no key-read-mismatch
		rows               string
	}{
		{"day-unlimited", "  delayed_today: {table: shipments_by_day, by: [shippedAt], where: {delayed: true}, rate: 1/min, latency: 2s}\n", "", SeverityError, "77.8 million"},
		{"day-limit", "  delayed_today: {table: shipments_by_day, by: [shippedAt], where: {delayed: true}, limit: 20, rate: 1/min, latency: 2s}\n", "", SeverityWarning, "10 thousand"},
		{"calendar-month", "  delayed_month:\n    table: shipments_by_day\n    where: {delayed: true}\n    range: {field: shippedAt, calendar: this_month}\n    limit: 500\n    rate: 1/min\n", "", SeverityWarning, "250 thousand"},
		{"absolute-range", "  delayed_week:\n    table: shipments_by_day\n    where: {delayed: true}\n    range: {field: shippedAt, from: 2025-11-01, to: 2025-11-08}\n    rate: 1/h\n", "", SeverityError, "544 million"},
		// A partial table of delayed shipments holds only what the
		// predicate asks for: nothing is filtered.
		{"partial-table", "  delayed_today: {table: delayed_by_day, by: [shippedAt], where: {delayed: true}, limit: 20, rate: 1/min, latency: 2s}\n",
			"  delayed_by_day:\n    role: index\n    entity: shipment\n    when: delayed\n    rowkey: [\"day(shippedAt)\", shipmentId]\n    covering: [carrier]\n    families: {d: {}}\n", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := findingsOf(reviewYAML(t, c.name, src(c.query, c.extra)), "key-read-mismatch")
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("want no key-read-mismatch, got %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Severity != c.want {
				t.Fatalf("want one key-read-mismatch %s, got %v", c.want, got)
			}
			if !strings.Contains(got[0].Message, c.rows+" rows read") {
				t.Errorf("want %s rows read in: %s", c.rows, got[0].Message)
			}
		})
	}
}

// Every finding any test schema or example produces carries a severity its
// rule documents in docs/rules.md (Rule.Levels).
func TestSeveritiesFollowTheDocumentedRule(t *testing.T) {
	var srcs []string
	for _, r := range Catalogue() {
		srcs = append(srcs, r.Example)
	}
	for _, s := range fixes() {
		srcs = append(srcs, s)
	}
	files, _ := filepath.Glob("../examples/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	for i, src := range srcs {
		rep := reviewYAML(t, "severity", src)
		for _, f := range rep.Findings {
			rule, ok := Lookup(f.Rule)
			if !ok {
				t.Errorf("finding of unknown rule: %s", f)
				continue
			}
			if !rule.Allows(f.Severity) {
				t.Errorf("schema %d: %s fired at %s, which docs/rules.md does not list for it: %s", i, f.Rule, f.Severity, f.Message)
			}
		}
	}
}

// The key formats of tables built by hand are reviewed like denorm's own:
// epoch milliseconds as text lead the key (monotonic), a bit-reversed
// sequence does not, and a hash of two few-valued fields is a hot prefix.
func TestExistingKeyFormats(t *testing.T) {
	src := func(rowkey string) string {
		return `name: formats
entities:
  reading:
    key: [deviceId, ts]
    version: ts
    version_kind: epoch_ms
    fields: {deviceId: {type: string, size: 10}, ts: timestamp, seq: int64, region: {type: string, size: 4}, kind: {type: string, size: 4}, v: float64}
tables:
  readings:
    role: primary
    entity: reading
    rowkey: ` + rowkey + `
    families: {d: {}}
    columns: {d:v: v, d:r: region, d:k: kind, d:s: seq}
workload:
  keys:
    reading.seq: {distribution: sequential}
    reading.region: {distribution: uniform, cardinality: 3}
    reading.kind: {distribution: uniform, cardinality: 4}
` + depthBase
	}
	cases := []struct {
		rowkey, rule string
		fires        bool
	}{
		{`["text(ts, #)", "text(deviceId)"]`, "key-monotonic", true},
		{`["pad(seq, 12, #)", deviceId, ts]`, "key-monotonic", true},
		{`["bitrev(seq)", deviceId, ts]`, "key-monotonic", false},
		{`["hash(region, kind, 2)", deviceId, ts]`, "index-hot-prefix", true},
		{`["hash(region, deviceId, 2)", deviceId, ts]`, "index-hot-prefix", false},
	}
	for _, c := range cases {
		rep := reviewYAML(t, "formats", src(c.rowkey))
		if got := len(findingsOf(rep, c.rule)) > 0; got != c.fires {
			t.Errorf("rowkey %s: %s fires %v, want %v: %v", c.rowkey, c.rule, got, c.fires, rep.Findings)
		}
		if c.rule == "index-hot-prefix" && c.fires && !strings.Contains(findingsOf(rep, c.rule)[0].Message, "at most 12") {
			t.Errorf("want 3 x 4 = 12 leading values: %v", findingsOf(rep, c.rule))
		}
	}
}

// Client profiles: a request path on the batch job's profile is flagged,
// and so is a profile that opens a connection per request.
func TestClientProfiles(t *testing.T) {
	src := func(profile string) string {
		return `name: profiles
entities:
  order:
    key: orderId
    version: version
    fields: {orderId: {type: string, size: 12}, customerId: {type: string, size: 10}}
tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, orderId]
    families: {d: {}}
    columns: {}
queries:
  page: {table: orders, by: [customerId], limit: 20, latency: 30ms, profile: ` + profile + `}
client:
  rpc_timeout: 2s
  operation_timeout: 10s
  write_buffer: 4MiB
  connection: per_process
  batching: buffered
  profiles:
    request: {rpc_timeout: 100ms, operation_timeout: 300ms}
    batch: {rpc_timeout: 60s, operation_timeout: 30m, scanner_timeout: 5m}
    legacy: {connection: per_request}
ops: {major_compaction: manual, durability: sync_wal}
`
	}
	rep := reviewYAML(t, "profiles", src("batch"))
	got := findingsOf(rep, "client-no-timeouts")
	if len(got) != 1 || got[0].Query != "page" || !strings.Contains(got[0].Message, "30m") {
		t.Errorf("want client-no-timeouts on page for the batch profile, got %v", got)
	}
	if c := findingsOf(rep, "connection-per-request"); len(c) != 1 || !strings.Contains(c[0].Message, "profiles.legacy") {
		t.Errorf("want connection-per-request on the legacy profile, got %v", c)
	}
	if got := findingsOf(reviewYAML(t, "profiles-request", src("request")), "client-no-timeouts"); len(got) != 0 {
		t.Errorf("the request profile fits a 30ms target: %v", got)
	}
}

// The family and table settings the fixes name are what the rules read:
// MOB answers big cells, max_size catches a rare huge one, max_row_size
// turns a big row into failing reads, a setting of its own justifies a
// family, and a disabled split policy leaves regions to grow.
func TestStorageSettingsInRules(t *testing.T) {
	src := func(docField, family, table string) string {
		return `name: docs
entities:
  doc:
    key: docId
    version: version
    fields:
      docId: {type: string, size: 12}
      title: {type: string, size: 40}
      body: ` + docField + `
    children:
      notes: {key: n, max: 5000, typical: 3, fields: {n: int32, text: {type: string, size: 4KiB}}}
tables:
  docs:
    role: primary
    entity: doc
    rowkey: ["hash(docId, 1)", docId]
    presplit: 8
` + table + `    families:
      d: {}
      b: ` + family + `
      n: {}
    columns: {d:t: title, b:b: body, "n:{n}": notes}
workload:
  entities: 2000000000
` + depthBase
	}
	has := func(rep Report, rule, text string) bool {
		for _, f := range findingsOf(rep, rule) {
			if strings.Contains(f.Message, text) {
				return true
			}
		}
		return false
	}
	// 2 MiB bodies: a warning without MOB, nothing with it.
	if rep := reviewYAML(t, "docs", src("{type: bytes, size: 2MiB}", "{}", "")); !has(rep, "cell-huge", "without MOB") {
		t.Errorf("2 MiB cells without MOB: want cell-huge, got %v", rep.Findings)
	}
	if rep := reviewYAML(t, "docs-mob", src("{type: bytes, size: 2MiB}", "{mob: true, mob_threshold: 512KiB}", "")); len(findingsOf(rep, "cell-huge")) != 0 {
		t.Errorf("2 MiB cells in a MOB family: want no cell-huge, got %v", findingsOf(rep, "cell-huge"))
	}
	// A typical 20 KiB body that can reach 40 MiB is refused at its largest.
	if rep := reviewYAML(t, "docs-max", src("{type: bytes, size: 20KiB, max_size: 40MiB}", "{mob: true}", "")); !has(rep, "cell-huge", "cells of up to 40") {
		t.Errorf("max_size over the limit: want a cell-huge error, got %v", findingsOf(rep, "cell-huge"))
	}
	// 5,000 notes of 4 KiB is a 20 MiB row: a warning, an error past a
	// 16 MiB max_row_size.
	rep := reviewYAML(t, "docs-row", src("{type: bytes, size: 1KiB}", "{}", "    max_row_size: 16MiB\n"))
	if got := findingsOf(rep, "row-unbounded"); len(got) != 1 || got[0].Severity != SeverityError || !strings.Contains(got[0].Message, "max_row_size") {
		t.Errorf("a row over max_row_size: want a row-unbounded error, got %v", got)
	}
	// Three families with the same settings, then one with its own.
	if !reviewYAML(t, "docs-fam", src("{type: bytes, size: 1KiB}", "{}", "")).Has("family-count") {
		t.Error("three identical families: want family-count")
	}
	if reviewYAML(t, "docs-fam2", strings.Replace(src("{type: bytes, size: 1KiB}", "{blockcache: false}", ""), "n: {}", "n: {compaction: date_tiered}", 1)).Has("family-count") {
		t.Error("families told apart by blockcache and compaction: want no family-count")
	}
	// 2 billion documents in 8 regions that never split.
	if !has(reviewYAML(t, "docs-split", src("{type: bytes, size: 1KiB}", "{}", "    split_policy: disabled\n")), "region-size", "never splits") {
		t.Error("split_policy disabled with giant regions: want region-size")
	}
}

// A per-entity write rate replaces the workload's for that entity's tables.
func TestWritesByEntity(t *testing.T) {
	src := `name: rates
entities:
  click:
    key: clickId
    version: version
    fields: {clickId: {type: string, size: 12}, page: {type: string, size: 20}}
  page:
    key: pageId
    version: version
    fields: {pageId: {type: string, size: 12}, title: {type: string, size: 20}}
tables:
  clicks: {role: primary, entity: click, rowkey: [clickId], families: {d: {}}, columns: {d:p: page}}
  pages: {role: primary, entity: page, rowkey: [pageId], families: {d: {}}, columns: {d:t: title}}
workload:
  writes_per_second: 10/s
  writes_by_entity: {click: 5000/s}
` + depthBase
	got := findingsOf(reviewYAML(t, "rates", src), "presplit-missing")
	if len(got) != 1 || got[0].Table != "clicks" || !strings.Contains(got[0].Message, "5000 writes/s") {
		t.Errorf("want presplit-missing on clicks alone, at 5000 writes/s: %v", got)
	}
}
