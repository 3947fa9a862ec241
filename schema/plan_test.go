package schema

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/rowkey"
)

func loadExample(t *testing.T, name string) *Plan {
	t.Helper()
	p, err := Load(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestOrdersPlan(t *testing.T) {
	p := loadExample(t, "orders.yaml")
	order := p.Entity("order")
	if order == nil || !reflect.DeepEqual(order.Key, []string{"orderId"}) || order.VersionKind != VersionEvent {
		t.Fatalf("order entity = %+v", order)
	}
	if f := order.Field("items.sku"); f == nil || f.Type != rowkey.String || f.Child != "items" || f.Size != 8 {
		t.Errorf("items.sku = %+v", f)
	}
	if c := order.Child("items"); c == nil || c.Max != 200 || c.Key != "line" || c.Typical != 3 {
		t.Errorf("items = %+v", c)
	}
	ref, cp := order.Copy("items.priceCents")
	if ref == nil || ref.Entity != "product" || cp.Intent != IntentSnapshot || cp.From != "priceCents" {
		t.Errorf("priceCents copy = %+v %+v", ref, cp)
	}
	if _, cp := order.Copy("items.name"); cp == nil || cp.Intent != IntentLive {
		t.Errorf("name copy = %+v", cp)
	}
	if !reflect.DeepEqual(ref.Live, []string{"name"}) {
		t.Errorf("fields copied live = %q, want only name (the price is a snapshot)", ref.Live)
	}

	orders := p.Primary("order")
	if orders == nil || orders.Name != "orders" {
		t.Fatalf("primary = %+v", orders)
	}
	if got := orders.Key.Exprs(); !reflect.DeepEqual(got, []string{"customerId", "reverse(placedAt)", "orderId"}) {
		t.Errorf("orders key = %v", got)
	}
	if len(orders.KeyLines) != 3 || orders.KeyLines[0] != orders.Lines["rowkey"] {
		t.Errorf("key lines %v, rowkey line %d", orders.KeyLines, orders.Lines["rowkey"])
	}
	d := orders.Family("d")
	if d == nil || d.DataBlockEncoding != "FAST_DIFF" || d.Compression != "SNAPPY" || d.Versions() != 1 || d.BloomFilter != "ROW" {
		t.Errorf("family d = %+v", d)
	}
	items := orders.ColumnFor("items")
	if items == nil || !items.Template || items.Family != "i" || items.Child != "items" || items.Field != "" {
		t.Errorf("items column = %+v", items)
	}
	if c := orders.ColumnFor("status"); c == nil || c.Name() != "d:s" || c.Line == 0 {
		t.Errorf("status column = %+v", c)
	}
	if orders.Presplit != 16 || orders.Ref != nil {
		t.Errorf("orders presplit %d ref %v", orders.Presplit, orders.Ref)
	}

	byStatus := p.Table("orders_by_status")
	if !byStatus.Thin() || byStatus.Presplit != 8 || byStatus.Ref == nil || byStatus.Ref.Name() != "d:r" {
		t.Errorf("orders_by_status = %+v", byStatus)
	}
	bySku := p.Table("orders_by_sku")
	if bySku.Thin() || bySku.Each != "items" || len(bySku.Columns) != 3 {
		t.Errorf("orders_by_sku = %+v", bySku)
	}
	units := p.Table("daily_units")
	if units.Counter == nil || units.Counter.Buckets != 1 || units.Counter.Mode != CounterBounded ||
		len(units.Counter.Adds) != 1 || units.Counter.Adds[0].Field != "items.quantity" || units.Family("c") == nil {
		t.Errorf("daily_units = %+v %+v", units, units.Counter)
	}
	lookup := p.Table("orders_by_product")
	if lookup.Reference != "product" || lookup.Each != "items" {
		t.Errorf("lookup = %+v", lookup)
	}
	if got := p.TablesOf("order"); len(got) != 5 || got[0] != orders {
		t.Errorf("TablesOf(order) = %d tables", len(got))
	}

	shapes := map[string]ScanShape{"recent_orders": ShapePrefix, "open_order": ShapeGet, "orders_by_status": ShapePrefix, "daily_units": ShapeGet}
	for name, want := range shapes {
		q := p.Query(name)
		if q == nil || q.Shape != want {
			t.Errorf("query %s = %+v, want shape %s", name, q, want)
		}
	}
	if q := p.Query("orders_by_status"); q.Bound.FanOut != 8 || q.Bound.Parts != 2 || q.Limit != 100 || q.Rate != 5 || q.Latency != 200*time.Millisecond {
		t.Errorf("orders_by_status query = %+v", q)
	}
	if p.Workload.WritesPerSecond != 2000 || p.Workload.EntityCounts["order"] != 50000000 || p.Workload.Entities != 50100000 {
		t.Errorf("workload = %+v", p.Workload)
	}
	if st := p.Workload.Distribution("order", "status"); st == nil || st.Kind != DistWeighted || st.Values["OPEN"] != 0.05 {
		t.Errorf("status distribution = %+v", st)
	}
	if c := p.Client; c.RPCTimeout != 2*time.Second || c.WriteBuffer != 4<<20 || c.Connection != ConnectionPerProcess || c.Lines["batching"] == 0 {
		t.Errorf("client = %+v", c)
	}
	if o := p.Ops; o.Offpeak == nil || o.Offpeak.StartHour != 1 || o.Offpeak.EndHour != 5 || o.RegionMaxFilesize != 10<<30 || o.Durability != DurabilitySyncWAL {
		t.Errorf("ops = %+v", o)
	}
}

func TestDeviceEventsPlans(t *testing.T) {
	naive := loadExample(t, "device_events_naive.yaml")
	dev := naive.Table("device_events")
	if len(dev.Families) != 5 || dev.Key.Part(0).Field != "ts" || naive.Client.Connection != ConnectionPerRequest {
		t.Errorf("naive device_events = %+v", dev)
	}
	if q := naive.Query("device_last_hour"); q.Bound.Parts != 0 || !reflect.DeepEqual(q.Bound.Unused, []string{"deviceId"}) || q.Shape != ShapeRange {
		t.Errorf("naive last hour = %+v", q)
	}
	if naive.Workload.WritesPerSecond != 20000 {
		t.Errorf("naive writes = %v", naive.Workload.WritesPerSecond)
	}

	fixed := loadExample(t, "device_events.yaml")
	dev = fixed.Table("device_events")
	if len(dev.Families) != 1 || dev.Presplit != 64 || dev.Key.Part(0).Func != rowkey.Hash || dev.Family("d").TTL != 90*24*time.Hour {
		t.Errorf("fixed device_events = %+v", dev)
	}
	q := fixed.Query("device_last_hour")
	if q.Shape != ShapePrefix || q.Bound.Parts != 2 || q.Range == nil || !q.Range.OnKey || q.Range.Last != time.Hour {
		t.Errorf("fixed last hour = %+v %+v", q, q.Range)
	}
	if a := fixed.Table("device_alerts"); a.When != "alert" || a.Key.Part(0).Func != rowkey.Day {
		t.Errorf("alerts = %+v", a)
	}
	if e := fixed.Entity("reading"); e.VersionKind != VersionEpochMillis || len(e.Key) != 2 {
		t.Errorf("reading = %+v", e)
	}
}

func TestNaiveOrdersPlan(t *testing.T) {
	p := loadExample(t, "orders_naive.yaml")
	if q := p.Query("recent_orders_for_customer"); q.Shape != ShapeFull {
		t.Errorf("recent orders shape %s", q.Shape)
	}
	if q := p.Query("revenue_report"); !q.FullScan || q.Shape != ShapeFull {
		t.Errorf("revenue report = %+v", q)
	}
	units := p.Table("daily_units_per_sku")
	if units.Counter.Buckets != 1 || units.Counter.Mode != CounterFast || units.Family("counter_values") == nil {
		t.Errorf("counter = %+v", units.Counter)
	}
	if ref, cp := p.Entity("order").Copy("items.name"); cp == nil || cp.Intent != IntentNone || len(ref.Live) != 0 {
		t.Errorf("copy intent = %+v of reference %+v", cp, ref)
	}
	if p.Ops.Presplit != 0 || p.Table("customer_order_records").Presplit != 1 {
		t.Errorf("presplit ops %d table %d", p.Ops.Presplit, p.Table("customer_order_records").Presplit)
	}
	if f := p.Entity("order").Field("invoicePdf"); f.Size != 12<<20 || f.AvgSize() != 12<<20 {
		t.Errorf("invoicePdf = %+v", f)
	}
}

func TestDefaultsAndInference(t *testing.T) {
	doc := base + `  by_status:
    role: index
    entity: order
    rowkey: ["salt(orderId, 4)", status, orderId]
    covering: [total, placedAt]
  daily:
    role: counter
    entity: order
    rowkey: [day(placedAt)]
    add: {c:n: 1, c:t: total}
`
	p, err := Parse("d.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	orders := p.Table("orders")
	if len(orders.Families) != 1 || orders.Families[0].Name != "d" || orders.Presplit != 1 {
		t.Errorf("inferred families %+v", orders.Families)
	}
	idx := p.Table("by_status")
	if c := idx.ColumnFor("total"); c == nil || c.Name() != "d:total" {
		t.Errorf("auto column = %+v", c)
	}
	daily := p.Table("daily")
	if daily.Family("c") == nil || daily.Counter.Buckets != 1 || daily.Counter.Adds[0].Const != 1 {
		t.Errorf("daily = %+v %+v", daily, daily.Counter)
	}
}

// FuzzLoad feeds arbitrary bytes to Parse: it must return a plan or an
// error, never panic, and a plan it returns must be complete.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(base))
	for _, c := range errorCases {
		f.Add([]byte(c.yaml))
	}
	f.Add([]byte("a: &x [*x]\n"))
	// The vocabulary of issue 15: where, ranges, key formats, storage
	// settings, profiles and fanout tables.
	f.Add([]byte(vocabBase + "queries:\n  q: {table: readings, where: {alert: true}, range: {field: ts, calendar: today}, direction: reverse, limit: 5}\n"))
	f.Add([]byte(fanoutBase))
	f.Add([]byte(strings.Replace(vocabBase, "families: {d: {}}", "families: {d: {mob: true, mob_threshold: 200KiB, min_versions: 0, blockcache: false, compaction: date_tiered}}\n    split_policy: disabled\n    max_row_size: 64MiB\n    region_replicas: 2", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			if p != nil {
				t.Fatal("a plan returned with an error")
			}
			return
		}
		for _, tb := range p.Tables {
			if tb.Key == nil || len(tb.Families) == 0 || p.Entity(tb.Entity) == nil {
				t.Fatalf("incomplete table %+v", tb)
			}
		}
		for _, q := range p.Queries {
			if p.Table(q.Table) == nil || q.Shape == "" {
				t.Fatalf("incomplete query %+v", q)
			}
		}
	})
}

func TestCellLayouts(t *testing.T) {
	p := loadExample(t, "orders.yaml")
	items := p.Table("orders").ColumnFor("items")
	q1, err := items.QualifierFor(p, "order", 1)
	if err != nil {
		t.Fatal(err)
	}
	q2, _ := items.QualifierFor(p, "order", int32(2))
	q10, _ := items.QualifierFor(p, "order", 10)
	if !(string(q1) < string(q2) && string(q2) < string(q10)) {
		t.Errorf("item qualifiers out of order: %x %x %x", q1, q2, q10)
	}
	// A qualifier is the key's encoding, escaped when it starts at or
	// below QualifierEscape, whether built alone or after other bytes.
	// int32 keys below -2^31 + 3*2^24 encode from 0x00 to 0x02.
	for _, k := range []int32{1, -1, -1 << 30, math.MinInt32, math.MinInt32 + 0x01020304} {
		want, _ := rowkey.AppendValue(nil, rowkey.Int32, k)
		if want[0] <= QualifierEscape {
			want = append([]byte{QualifierEscape}, want...)
		}
		alone, err := items.QualifierFor(p, "order", k)
		if err != nil || string(alone) != string(want) {
			t.Errorf("QualifierFor(%d) = %x, %v; want %x", k, alone, err, want)
		}
		got, err := items.AppendQualifier([]byte("ab"), p, "order", k)
		if err != nil || string(got) != "ab"+string(want) {
			t.Errorf("AppendQualifier(ab, %d) = %x, %v; want ab then %x", k, got, err, want)
		}
	}
	if k, ok := items.ChildKeyOf(p, "order", q10); !ok || k != int32(10) {
		t.Errorf("ChildKeyOf = %v, %v", k, ok)
	}
	if _, ok := items.ChildKeyOf(p, "order", []byte("x")); ok {
		t.Error("a foreign qualifier was accepted")
	}
	// Bucket rows: the example's counter in 4 buckets.
	src, err := os.ReadFile(filepath.Join("..", "examples", "orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p4, err := Parse("orders_4.yaml", []byte(strings.Replace(string(src), "buckets: 1", "buckets: 4", 1)))
	if err != nil {
		t.Fatal(err)
	}
	units := p4.Table("daily_units")
	vals := rowkey.Values{"placedAt": int64(0), "items.sku": "s1"}
	base, _ := units.Key.Encode(vals)
	row, err := units.CounterRow(vals, 3)
	if err != nil || len(row) != len(base)+1 || row[len(row)-1] != 3 {
		t.Errorf("counter row %x (%v), key %x", row, err, base)
	}
	if _, err := units.CounterRow(vals, 4); err == nil {
		t.Error("bucket 4 of 4 accepted")
	}
	if b := units.CounterBucket([]byte("o-1")); b != units.CounterBucket([]byte("o-1")) || b < 0 || b >= 4 {
		t.Errorf("bucket %d", b)
	}
}

func TestWriteShares(t *testing.T) {
	dev := loadExample(t, "device_events.yaml")
	alerts := dev.Table("device_alerts")
	if s := dev.WhenShare(alerts); s < 0.00099 || s > 0.00101 {
		t.Errorf("alerts share = %v, want 0.001", s)
	}
	if w := dev.WritesPerSecond(alerts); w < 19.9 || w > 20.1 {
		t.Errorf("alerts writes = %v/s, want 20", w)
	}
	if w := dev.WritesPerSecond(dev.Table("device_events")); w != 20000 {
		t.Errorf("events writes = %v/s", w)
	}
	orders := loadExample(t, "orders.yaml")
	if r := orders.RowsPerEvent(orders.Table("orders_by_sku")); r != 3 {
		t.Errorf("rows per order in orders_by_sku = %v, want 3 (typical items)", r)
	}
}

func TestElementCollision(t *testing.T) {
	doc := base + `  by_sku:
    role: index
    entity: order
    each: items
    rowkey: [items.sku, orderId]
    covering: [status, items.qty]
  by_sku_line:
    role: index
    entity: order
    each: items
    rowkey: [items.sku, orderId, items.line]
    covering: [items.qty]
`
	p, err := Parse("c.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Table("by_sku").ElementCollision(p); got != "items.qty" {
		t.Errorf("by_sku collision = %q, want items.qty", got)
	}
	if got := p.Table("by_sku_line").ElementCollision(p); got != "" {
		t.Errorf("by_sku_line collision = %q", got)
	}
	orders := loadExample(t, "orders.yaml")
	if got := orders.Table("orders_by_sku").ElementCollision(orders); got != "" {
		t.Errorf("orders_by_sku collision = %q", got)
	}
}

func TestQueryByKeyParts(t *testing.T) {
	doc := base + `  daily:
    role: counter
    entity: order
    rowkey: ["day(placedAt)", status]
    add: {c:n: 1}
queries:
  q: {table: daily, by: [day(placedAt), status]}
`
	p, err := Parse("q.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Query("q"); !reflect.DeepEqual(q.By, []string{"placedAt", "status"}) || q.Shape != ShapeGet {
		t.Errorf("q = %+v", q)
	}
}
