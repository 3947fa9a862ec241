package cost

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
)

func parse(t *testing.T, src string) *schema.Plan {
	t.Helper()
	p, err := schema.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The worked example as a schema: a 32-byte row key (30 bytes of string
// plus the 2-byte terminator), family d, an 8-byte qualifier and an int64.
func TestWorkedExampleAsSchema(t *testing.T) {
	p := parse(t, `
name: x
entities:
  thing:
    key: id
    fields: {id: {type: string, size: 30}, n: int64}
tables:
  things:
    role: primary
    entity: thing
    rowkey: [id]
    families: {d: {}}
    columns: {d:abcdefgh: n}
`)
	est, err := EstimatePlan(p, Options{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	te := est.Tables[0]
	if te.KeyBytes != 32 || !near(te.Bytes, 69) || !near(te.ValueBytes, 8) || !near(te.Overhead, 69.0/8) {
		t.Fatalf("got key %d bytes %.1f values %.1f overhead %.3f; want 32, 69, 8, 8.625", te.KeyBytes, te.Bytes, te.ValueBytes, te.Overhead)
	}
	if !near(te.Replicated, 69) || est.Replication != 1 {
		t.Errorf("replication 1: replicated %.1f", te.Replicated)
	}
}

const ordersSrc = `
name: x
entities:
  order:
    key: id
    fields: {id: {type: string, size: 10}, status: {type: string, size: 6}, total: int64}
    children:
      items:
        key: line
        max: 100
        typical: 4
        fields: {line: int32, qty: int64}
tables:
  orders:
    role: primary
    entity: order
    rowkey: [id]
    families: {d: {}}
    columns: {d:s: status, d:t: total, "d:i{line}": items}
  by_status:
    role: index
    entity: order
    rowkey: [salt(id, 4), status, id]
    covering: []
    families: {x: {}}
  by_qty:
    role: index
    entity: order
    each: items
    rowkey: [items.qty, id]
    covering: [total]
    families: {x: {}}
    columns: {x:t: total}
  counts:
    role: counter
    entity: order
    rowkey: [status]
    buckets: 2
    mode: exact
    add: {c:n: 1}
    families: {c: {}}
workload:
  writes_per_second: 10
  entities: 1000
`

func TestEstimateByHand(t *testing.T) {
	p := parse(t, ordersSrc)
	est, err := EstimatePlan(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if est.Replication != DefaultReplication {
		t.Fatalf("default replication %d", est.Replication)
	}
	byName := map[string]TableEstimate{}
	for _, te := range est.Tables {
		byName[te.Table] = te
	}
	// orders: key 12. d:s 20+12+1+1+6 = 40; d:t 20+12+1+1+8 = 42; four
	// items d:i + 4-byte line, value 4+8: 20+12+1+5+12 = 50 each.
	o := byName["orders"]
	if o.KeyBytes != 12 || !near(o.Bytes, 40+42+4*50) || !near(o.ValueBytes, 6+8+4*12) || !near(o.CellsPerRecord, 6) {
		t.Errorf("orders: %+v", o)
	}
	// by_status: key 1 + 8 + 12 = 21; the ref cell x:r holds the 12-byte
	// primary key: 20+21+1+1+12 = 55.
	s := byName["by_status"]
	if s.KeyBytes != 21 || !near(s.Bytes, 55) || !near(s.ValueBytes, 12) {
		t.Errorf("by_status: %+v", s)
	}
	// by_qty: one row per item (4), key 8 + 12 = 20; x:t 20+20+1+1+8 = 50,
	// x:r 20+20+1+1+12 = 54; per record 4 * 104.
	q := byName["by_qty"]
	if q.KeyBytes != 20 || !near(q.RowsPerRecord, 4) || !near(q.Bytes, 4*104) {
		t.Errorf("by_qty: %+v", q)
	}
	// counts, mode exact: one contribution per record, growing with the
	// records, so in the totals; key 6+2 + 1 bucket byte = 9, qualifier
	// "n" + 0 + the 12-byte entity key, an 8-byte value: 20+9+1+14+8 = 52.
	c := byName["counts"]
	if c.Shared || c.CounterMode != "exact" || c.KeyBytes != 9 || !near(c.Bytes, 52) {
		t.Errorf("counts: %+v", c)
	}
	if len(est.Entities) != 1 {
		t.Fatalf("entities: %+v", est.Entities)
	}
	e := est.Entities[0]
	total := o.Bytes + s.Bytes + q.Bytes + c.Bytes
	if !near(e.Bytes, total) || !near(e.Replicated, 3*total) || e.Records != 1000 || !near(e.TotalBytes, 1000*total) {
		t.Errorf("entity total: %+v, want bytes %.0f", e, total)
	}
	if !near(est.TotalBytes, 1000*total) || !near(est.TotalReplicated, 3000*total) {
		t.Errorf("plan totals %.0f / %.0f, want %.0f / %.0f", est.TotalBytes, est.TotalReplicated, 1000*total, 3000*total)
	}
	if !near(e.Overhead, total/e.ValueBytes) {
		t.Errorf("overhead %.3f", e.Overhead)
	}
}

// Per mode, a counter costs what it stores: fast, one shared row per
// bucket (out of the totals); exact, a contribution per record; bounded,
// the Counted record per record, its counter rows of fixed size noted.
func TestEstimateCounterModes(t *testing.T) {
	get := func(mode string) TableEstimate {
		est, err := EstimatePlan(parse(t, strings.Replace(ordersSrc, "mode: exact", "mode: "+mode, 1)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, te := range est.Tables {
			if te.Table == "counts" {
				return te
			}
		}
		t.Fatal("no counts table")
		return TableEstimate{}
	}
	fast, exact, bounded := get("fast"), get("exact"), get("bounded")
	// fast: key 9, one 8-byte cell per bucket row: 2 * (20+9+1+1+8).
	if !fast.Shared || !near(fast.Bytes, 2*39) {
		t.Errorf("fast: %+v", fast)
	}
	if exact.Shared || !near(exact.Bytes, 52) {
		t.Errorf("exact: %+v", exact)
	}
	// bounded: the record in the primary row (key 12, family d, "\x00c"):
	// 8+4+1 and one count of 4+6+9+1+1+4 = 25 bytes: 20+12+1+2+38 = 73.
	if bounded.Shared || bounded.CounterMode != "bounded" || !near(bounded.Bytes, 73) || len(bounded.Assumptions) == 0 {
		t.Errorf("bounded: %+v", bounded)
	}
}

func TestEstimateRejectsNegativeReplication(t *testing.T) {
	if _, err := EstimatePlan(parse(t, ordersSrc), Options{Replication: -1}); err == nil {
		t.Fatal("replication -1 accepted")
	}
}

// Longer values, more children or longer names can only make a record
// dearer.
func TestEstimateMonotoneInSizes(t *testing.T) {
	for _, c := range []struct{ small, big string }{
		{"size: 10", "size: 40"},
		{"typical: 4", "typical: 40"},
		{"columns: {d:s: status", "columns: {d:status_of_order: status"},
	} {
		small := parse(t, ordersSrc)
		big := parse(t, replaceOnce(t, ordersSrc, c.small, c.big))
		a, _ := EstimatePlan(small, Options{Replication: 1})
		b, _ := EstimatePlan(big, Options{Replication: 1})
		if !(b.Entities[0].Bytes > a.Entities[0].Bytes) {
			t.Errorf("%q -> %q: %.0f not above %.0f", c.small, c.big, b.Entities[0].Bytes, a.Entities[0].Bytes)
		}
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := indexOf(s, old)
	if i < 0 {
		t.Fatalf("%q not in source", old)
	}
	return s[:i] + new + s[i+len(old):]
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestExamplesEstimate(t *testing.T) {
	for _, name := range []string{"orders.yaml", "orders_naive.yaml", "device_events.yaml", "device_events_naive.yaml"} {
		p, err := schema.Load("../examples/" + name)
		if err != nil {
			t.Logf("skip %s: %v", name, err)
			continue
		}
		est, err := EstimatePlan(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range est.Entities {
			if e.Bytes <= 0 || e.Overhead < 1 {
				t.Errorf("%s: entity %s: %+v", name, e.Entity, e)
			}
			t.Logf("%s: %s: %.0f bytes per record (%.0f of values, overhead x%.1f)", name, e.Entity, e.Bytes, e.ValueBytes, e.Overhead)
		}
	}
}

func TestOutputs(t *testing.T) {
	est, err := EstimatePlan(parse(t, ordersSrc), Options{Replication: 2})
	if err != nil {
		t.Fatal(err)
	}
	var text, js strings.Builder
	if err := WriteText(&text, est); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"by_qty", "counts (counter, mode exact): one contribution cell per record", "x2 replicas", "order: 805 bytes per record", "1000 records"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteJSON(&js, est); err != nil {
		t.Fatal(err)
	}
	var back Estimate
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil {
		t.Fatal(err)
	}
	if back.Replication != 2 || len(back.Tables) != 4 || back.Entities[0].Bytes != est.Entities[0].Bytes {
		t.Errorf("JSON round trip: %+v", back)
	}
}
