package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// base is a small valid schema; cases append to or replace parts of it.
const base = `entities:
  order:
    key: orderId
    version: version
    fields: {orderId: string, status: string, placedAt: timestamp, total: int64}
    children:
      items: {key: line, max: 10, fields: {line: int32, sku: string, qty: int64, name: string}}
tables:
  orders:
    role: primary
    entity: order
    rowkey: [orderId]
    columns: {d:s: status, d:p: placedAt, d:t: total, "d:i{line}": items}
`

func TestBaseLoads(t *testing.T) {
	if _, err := Parse("base.yaml", []byte(base)); err != nil {
		t.Fatal(err)
	}
}

// Each case marks the lines that must fail with "#! text": an error on that
// line whose message contains text. Errors on unmarked lines fail the test,
// so every case also proves that loading reports all problems, each once.
var errorCases = []struct {
	name string
	yaml string
}{
	{"unknown top-level key", base + `colour: blue #! unknown key "colour"
`},
	{"unknown entity key", strings.Replace(base, "    version: version\n", "    version: version\n    primary_key: x #! unknown key \"primary_key\"\n", 1)},
	{"unknown table key", base + `    region_count: 4 #! unknown key "region_count"
`},
	{"unknown family setting and bad enums", base + `    families:
      d: {versions: 1, compresion: SNAPPY} #! unknown key "compresion"
  other:
    role: index
    entity: order
    rowkey: [status, orderId]
    families:
      d: {encoding: FAST-DIFF, bloom: ROWS} #! is not one of
`},
	{"wrong types", strings.Replace(base, "max: 10", "max: lots", 1) + `    families:
      d: {versions: two, in_memory: "yes", ttl: 86400, blocksize: 64KiB} #! want a whole number
queries:
  q: {table: orders, by: [orderId], limit: -1, latency: fast} #! out of range
`},
	{"counter mode not one of fast, exact, bounded", base + `  units:
    role: counter
    entity: order
    rowkey: [status]
    mode: capped #! is not one of fast, exact, bounded
    add: {c:n: 1}
`},
	{"child list without max", strings.Replace(base, "{key: line, max: 10, ", "{key: line, ", 1)},
	{"unknown fields everywhere", base + `  by_sku:
    role: index
    entity: order
    each: items
    rowkey: [items.skew, orderId] #! "items.skew" is not a field
    covering: [items.nam] #! "items.nam" is not a field
queries:
  q:
    table: orders
    by: [customer] #! "customer" is not a field
`},
	{"index key without the entity key", base + `  by_status:
    role: index
    entity: order
    rowkey: [salt(status, 4), status, reverse(placedAt)] #! cannot be unique
`},
	{"counter adding a non-number", base + `  daily:
    role: counter
    entity: order
    each: items
    rowkey: [day(placedAt), items.sku]
    add: {c:n: items.name, c:q: items.qty, c:o: 1} #! counter adds numbers
`},
	{"child field without each", base + `  by_sku:
    role: index
    entity: order
    rowkey: [items.sku, orderId] #! needs ` + "`each: items`" + `
`},
	{"duplicate names", base + `  orders: #! duplicate key "orders"
    role: index
queries:
  q: {table: orders, by: [orderId, orderId]} #! listed twice
`},
	{"duplicate field", strings.Replace(base, "total: int64}", "total: int64, status: string}", 1)},
	{"unknown entity and table", base + `  ghost:
    role: index
    entity: customer #! unknown entity "customer"
    rowkey: [x]
queries:
  q: {table: nothing} #! unknown table "nothing"
`},
	{"field not stored by the primary", strings.Replace(base, "d:t: total, ", "", 1)},
	{"undeclared family", strings.Replace(base, `columns: {d:s: status,`, `families: {d: {}}
    columns: {x:s: status,`, 1)},
	{"two primaries", base + `  orders2:
    role: primary #! already has primary table
    entity: order
    rowkey: [orderId]
    columns: {d:s: status, d:p: placedAt, d:t: total, "d:i{line}": items}
`},
	{"bad key expressions", base + `  by_status:
    role: index
    entity: order
    rowkey: ["salt(orderId, 999)", status, "rev(placedAt)", orderId] #! wants 1 to 256
`},
	{"reference problems", strings.Replace(strings.Replace(base, "    children:\n", `    references:
      product:
        entity: product
        key: items.sku
        copy:
          items.name: {from: title, intent: live} #! "title" is not a field of entity "product"
          items.qty: {from: name, intent: forever} #! is not one of snapshot, live
          status: {from: name} #! belong to different lists
    children:
`, 1), "tables:\n", `  product:
    key: sku
    fields: {sku: string, name: string}
tables:
`, 1)},
	{"live copy without a lookup table", strings.Replace(strings.Replace(base, "    children:\n", `    references:
      product: #! no lookup table serves it
        entity: product
        key: items.sku
        copy:
          items.name: {from: name, intent: live}
    children:
`, 1), "tables:\n", `  product:
    key: sku
    fields: {sku: string, name: string}
tables:
`, 1)},
	{"thin index with columns", base + `  by_status:
    role: index
    entity: order
    rowkey: [status, orderId]
    columns: {d:t: total} #! thin
`},
	{"template column mismatch", strings.Replace(base, `"d:i{line}": items`, `"d:i{sku}": items`, 1)},
	{"client and ops", base + `client:
  rpc_timeout: 10s
  operation_timeout: 2s #! shorter than rpc_timeout
  connection: pooled #! is not one of
ops:
  offpeak: "1:30-5" #! whole hours
  durability: maybe #! is not one of
`},
	{"workload", base + `workload:
  writes_per_second: lots #! rate
  keys:
    order.colour: {distribution: uniform} #! "colour" is not a field
    order.status: {distribution: zipf} #! needs a cardinality
`},
	{"role rules", base + `  by_status:
    role: index
    entity: order
    when: nosuch #! "nosuch" is not a field
    buckets: 4 #! belongs to counter tables
    rowkey: [status, orderId]
    families: {d: {}}
    columns: {d:r: total} #! reserved
  orders_each:
    role: primary #! already has primary table
    entity: order
    each: items #! a primary table holds one row per entity
    rowkey: [orderId]
    columns: {d:s: status, d:p: placedAt, d:t: total, "d:i{line}": items}
`},
	{"locator rules", base + `  order_locations:
    role: locator
    entity: order
    rowkey: [orderId, status] #! built from the entity key
    families:
      l: {ttl: 30d} #! a locator must not expire
`},
	{"lookup rules", strings.Replace(strings.Replace(base, "    children:\n", `    references:
      product: {entity: product, key: items.sku, copy: {items.name: {from: name, intent: live}}}
    children:
`, 1), "tables:\n", "  product: {key: sku, fields: {sku: string, name: string}}\ntables:\n", 1) + `  by_product:
    role: lookup
    entity: order
    reference: product
    rowkey: [orderId, items.sku] #! must start with the reference key
  by_nothing:
    role: lookup
    entity: order
    reference: supplier #! has no reference "supplier"
    rowkey: [orderId]
  product:
    role: primary
    entity: product
    rowkey: [sku]
    columns: {d:n: name}
`},
	{"entity rules", strings.Replace(strings.Replace(base, "key: orderId", "key: [orderId, items.sku] #! belongs to child list", 1),
		"version: version", "version: status #! want int64 or timestamp", 1)},
	{"query range and counter family", base + `  daily:
    role: counter
    entity: order
    rowkey: [day(placedAt)]
    families: {c: {}}
    add: {x:n: 1} #! family "x" is not declared
queries:
  q:
    table: orders
    by: [orderId]
    range: {field: status, last: 1h} #! a range needs a timestamp or number field
`},
	{"yaml syntax", "entities:\n  order: [\n# the list is never closed\n"},
}

// markers reads "#! text" markers: line -> expected text.
func markers(doc string) map[int]string {
	out := map[int]string{}
	for i, line := range strings.Split(doc, "\n") {
		if _, text, ok := strings.Cut(line, "#! "); ok {
			out[i+1] = strings.TrimSpace(text)
		}
	}
	return out
}

func TestErrorsNameFileLineAndPath(t *testing.T) {
	extra := map[string]map[int]string{
		// Problems reported on lines that cannot carry a marker comment.
		"child list without max":          {7: "has no max"},
		"duplicate field":                 {5: `duplicate key "status"`},
		"field not stored by the primary": {5: `field "total" of entity "order" is stored nowhere`},
		"undeclared family":               {14: `family "x" is not declared`},
		"template column mismatch":        {13: "is keyed by {line}", 7: "stored nowhere"},
		"wrong types":                     {7: "want a whole number"},
		"yaml syntax":                     {2: "did not find expected"}, // the unclosed [, not the end of the file
		"reference problems":              {7: "no lookup table serves it"},
	}
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			want := markers(c.yaml)
			for line, text := range extra[c.name] {
				want[line] = text
			}
			_, err := Parse("case.yaml", []byte(c.yaml))
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse error = %v (%T), want Errors", err, err)
			}
			got := map[int][]string{}
			for _, e := range errs {
				if e.File != "case.yaml" {
					t.Errorf("error names file %q", e.File)
				}
				if !strings.HasPrefix(e.Error(), "case.yaml:") {
					t.Errorf("message %q does not start with the file name", e.Error())
				}
				got[e.Line] = append(got[e.Line], e.Msg)
			}
			for line, text := range want {
				found := false
				for _, msg := range got[line] {
					found = found || strings.Contains(msg, text)
				}
				if !found {
					t.Errorf("line %d: want an error containing %q; got %q\nall: %v", line, text, got[line], err)
				}
			}
			for line := range got {
				if _, ok := want[line]; !ok && c.name != "yaml syntax" {
					t.Errorf("unexpected error on line %d: %q", line, got[line])
				}
			}
		})
	}
}

func TestErrorPaths(t *testing.T) {
	doc := base + `  by_sku:
    role: index
    entity: order
    each: items
    rowkey: [items.sku, orderId, items.line]
    covering: [items.qty]
    families:
      d: {ttl: 1500ms}
`
	_, err := Parse("p.yaml", []byte(doc))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	e := errs[0]
	if e.Line != 21 || e.Path != "tables.by_sku.families.d.ttl" {
		t.Errorf("error at line %d path %q, want 21 tables.by_sku.families.d.ttl", e.Line, e.Path)
	}
	if want := "p.yaml:21:"; !strings.HasPrefix(e.Error(), want) {
		t.Errorf("Error() = %q, want prefix %q", e.Error(), want)
	}
}

func TestEmptyAndOversized(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("# only a comment\n"), []byte("just a string"), []byte("[1, 2]")} {
		if _, err := Parse("x.yaml", data); err == nil {
			t.Errorf("Parse(%q) succeeded", data)
		}
	}
	if _, err := Parse("x.yaml", make([]byte, MaxFileSize+1)); err == nil {
		t.Error("an oversized file should be refused")
	}
	if _, err := Load("testdata/does-not-exist.yaml"); err == nil {
		t.Error("Load of a missing file should fail")
	}
}

// A file that names one big mapping many times through aliases must fail
// fast instead of walking it again for every alias.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("x: &f {")
	for i := 0; i < 5000; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "f%d: string", i)
	}
	b.WriteString("}\nentities:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "  e%d: {key: f1, fields: *f}\n", i)
	}
	start := time.Now()
	_, err := Parse("alias.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "too large once its aliases are expanded") {
		t.Errorf("err = %.200v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}
