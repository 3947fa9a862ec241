package review

import (
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
)

func reviewYAML(t *testing.T, name, src string) Report {
	t.Helper()
	p, err := schema.Parse(name+".yaml", []byte(src))
	if err != nil {
		t.Fatalf("%s: schema does not load:\n%v\n---\n%s", name, err, src)
	}
	rep := Review(p)
	// Whatever a test reviews, each finding's severity is one its rule
	// documents (docs/rules.md, "How severity is chosen").
	for _, f := range rep.Findings {
		if rule, ok := Lookup(f.Rule); !ok || !rule.Allows(f.Severity) {
			t.Errorf("%s: %s fired at %s, a level docs/rules.md does not list for it: %s", name, f.Rule, f.Severity, f.Message)
		}
	}
	return rep
}

func TestCleanExampleHasNoFindings(t *testing.T) {
	rep := reviewYAML(t, "clean", cleanExample())
	for _, f := range rep.Findings {
		t.Errorf("clean schema: %s", f)
	}
}

// Every rule's documented example triggers it, at a line inside the file.
func TestEveryExampleTriggersItsRule(t *testing.T) {
	for _, rule := range Catalogue() {
		t.Run(rule.ID, func(t *testing.T) {
			if rule.Example == "" {
				t.Fatal("no example")
			}
			rep := reviewYAML(t, rule.ID, rule.Example)
			lines := strings.Count(rule.Example, "\n") + 1
			found := false
			for _, f := range rep.Findings {
				if f.Rule != rule.ID {
					continue
				}
				found = true
				if f.Line < 1 || f.Line > lines {
					t.Errorf("finding points at line %d of a %d-line file: %s", f.Line, lines, f)
				}
				if f.Fix == "" || f.Message == "" {
					t.Errorf("finding without message or fix: %+v", f)
				}
			}
			if !found {
				t.Errorf("example does not trigger %s; findings: %v", rule.ID, rep.Findings)
			}
			// The example should show one mistake: other rules may add
			// notes, but no other error.
			for _, f := range rep.Findings {
				if f.Rule != rule.ID && f.Severity == SeverityError {
					t.Errorf("example also triggers error %s", f)
				}
			}
		})
	}
}

// fixes is, for each rule, its example with the fix applied: the rule must
// stay silent.
func fixes() map[string]string {
	ex := exampleSections()
	fix := func(id, old, new string) string {
		src := ex[id].render()
		if !strings.Contains(src, old) {
			panic("fix for " + id + ": " + old + " not in example")
		}
		return strings.Replace(src, old, new, 1)
	}
	return map[string]string{
		"key-monotonic":       fix("key-monotonic", "rowkey: [placedAt, orderId]", "rowkey: [salt(orderId, 8), placedAt, orderId]"),
		"key-read-mismatch":   fix("key-read-mismatch", "by: [status]", "by: [customerId, placedAt, orderId]"),
		"counter-hot-row":     fix("counter-hot-row", "mode: fast", "mode: fast\n    buckets: 16"),
		"index-hot-prefix":    fix("index-hot-prefix", "rowkey: [status,", "rowkey: [salt(orderId, 8), status,"),
		"family-count":        fix("family-count", "b: {}\n      c: {}", "b: {compression: SNAPPY}\n      c: {in_memory: true}"),
		"row-unbounded":       fix("row-unbounded", "max: 500000", "max: 500"),
		"cell-huge":           fix("cell-huge", "size: 12MiB", "size: 64KiB"),
		"versions-as-history": fix("versions-as-history", "versions: 100", "versions: 1"),
		"names-long": strings.Replace(fix("names-long", "      details: {}", "      d: {}"),
			"details:current_order_status", "d:s", 1),
		"scan-unbounded":              fix("scan-unbounded", "by: [customerId]", "by: [customerId]\n    limit: 50"),
		"client-side-join":            fix("client-side-join", "latency: 20ms", "latency: 500ms"),
		"table-as-queue":              fix("table-as-queue", "order_queue:", "orders_by_time:"),
		"connection-per-request":      fix("connection-per-request", "per_request", "per_process"),
		"puts-unbatched":              fix("puts-unbatched", "batching: single", "batching: buffered"),
		"client-no-timeouts":          fix("client-no-timeouts", "write_buffer: 4MiB", "rpc_timeout: 1s\n  operation_timeout: 5s\n  write_buffer: 4MiB"),
		"presplit-missing":            fix("presplit-missing", "rowkey: [customerId,", "rowkey: [salt(customerId, 16), customerId,"),
		"major-compaction-periodic":   fix("major-compaction-periodic", "major_compaction: periodic", "major_compaction: periodic\n  offpeak: \"01:00-05:00\""),
		"wal-skipped":                 fix("wal-skipped", "durability: skip_wal", "durability: skip_wal\n  regenerable: true"),
		"region-size":                 fix("region-size", "256MiB", "10GiB"),
		"counter-not-idempotent":      fix("counter-not-idempotent", "mode: fast", "mode: exact"),
		"copy-intent-missing":         fix("copy-intent-missing", "customerName: name ", "customerName: {from: name, intent: snapshot}"),
		"ttl-with-version-timestamps": fix("ttl-with-version-timestamps", "version_kind: event", "version_kind: epoch_ms"),
		"ttl-bounded-counter":         fix("ttl-bounded-counter", "mode: bounded ", "mode: exact "),
		"ttl-copy-outlives-primary":   fix("ttl-copy-outlives-primary", "d: {compression: SNAPPY}", "d: {compression: SNAPPY, ttl: 30d}"),
		"fanout-amplification":        fix("fanout-amplification", "post: 200/s", "post: 20/s"),
		"key-fields-mutable":          fix("key-fields-mutable", "      d:s: status\n", "      d:s: status\n"+cleanLocator),
	}
}

func TestEveryFixSilencesItsRule(t *testing.T) {
	fx := fixes()
	for _, rule := range Catalogue() {
		t.Run(rule.ID, func(t *testing.T) {
			src, ok := fx[rule.ID]
			if !ok {
				t.Fatal("no fixed schema for this rule")
			}
			rep := reviewYAML(t, rule.ID+"-fixed", src)
			for _, f := range rep.Findings {
				if f.Rule == rule.ID {
					t.Errorf("still fires after the fix: %s", f)
				}
			}
		})
	}
}

func TestIntegerIDMaybeSequence(t *testing.T) {
	src := `name: intid
entities:
  order:
    key: orderId
    version: version
    fields: {orderId: int64, status: {type: string, size: 7}}
tables:
  orders:
    role: primary
    entity: order
    rowkey: [orderId]
    families: {d: {}}
    columns: {d:s: status}
client: {rpc_timeout: 2s, operation_timeout: 10s, connection: per_process, batching: buffered}
ops: {major_compaction: manual}
`
	rep := reviewYAML(t, "intid", src)
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != "key-monotonic" || rep.Findings[0].Severity != SeverityWarning {
		t.Fatalf("want one key-monotonic warning, got %v", rep.Findings)
	}
	declared := src + "workload:\n  keys:\n    order.orderId: {distribution: uniform, cardinality: 1000000}\n"
	if rep := reviewYAML(t, "intid-uniform", declared); rep.Has("key-monotonic") {
		t.Errorf("a declared uniform id still flagged: %v", rep.Findings)
	}
}

// Live copies are stamped with the referenced entity's versions, in the
// first family of the referencing primary table, and a lookup table's
// reference rows too: a TTL there needs the referenced entity's versions to
// be times as well.
func TestTTLOverCopiedVersions(t *testing.T) {
	src := func(productKind, lookupTTL string) string {
		return `name: ttlcopies
entities:
  order:
    key: orderId
    version: updatedAt
    version_kind: epoch_ms
    fields:
      orderId: {type: string, size: 12}
      customerId: {type: string, size: 10}
      placedAt: timestamp
      sku: {type: string, size: 8}
      productName: {type: string, size: 24}
    references:
      product:
        entity: product
        key: sku
        copy:
          productName: {from: name, intent: live}
  product:
    key: sku
    version: version
    version_kind: ` + productKind + `
    fields:
      sku: {type: string, size: 8}
      name: {type: string, size: 24}
tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {ttl: 30d}
    columns:
      d:k: sku
      d:n: productName
  orders_by_product:
    role: lookup
    entity: order
    reference: product
    rowkey: [sku, orderId]
    families:
      l: {` + lookupTTL + `}
` + cleanLocator
	}
	findings := func(name, s string) []string {
		var out []string
		for _, f := range reviewYAML(t, name, s).Findings {
			if f.Rule == "ttl-with-version-timestamps" {
				out = append(out, f.Message)
			}
		}
		return out
	}
	got := findings("event-product", src("event", "ttl: 30d"))
	if len(got) != 2 || !strings.Contains(got[0]+got[1], "the live copies of product.name") || !strings.Contains(got[0]+got[1], "the reference rows of product") {
		t.Errorf("a product with counter versions: want findings for its live copies and its reference rows, got %q", got)
	}
	if got := findings("event-product-no-lookup-ttl", src("event", "compression: SNAPPY")); len(got) != 1 || !strings.Contains(got[0], "family d of table orders") {
		t.Errorf("a lookup table without a TTL: want the live copies' finding alone, got %q", got)
	}
	if got := findings("epoch-product", src("epoch_ms", "ttl: 30d")); len(got) != 0 {
		t.Errorf("a product with epoch_ms versions: want no finding, got %q", got)
	}
}
