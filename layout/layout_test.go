package layout

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

func ordersPlan(t testing.TB) *schema.Plan {
	t.Helper()
	p, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exactPlan is the orders example with daily_units keeping one contribution
// per order (mode exact) in 4 bucket rows.
func exactPlan(t testing.TB) *schema.Plan {
	t.Helper()
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(string(b), "mode: bounded", "mode: exact", 1), "buckets: 1", "buckets: 4", 1)
	p, err := schema.Parse("orders_exact.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// randomOrder makes an order state the way decoded events carry it.
func randomOrder(r *rand.Rand, id int) map[string]any {
	statuses := []string{"OPEN", "PAID", "SHIPPED", "CANCELLED"}
	st := map[string]any{
		"orderId":    fmt.Sprintf("o-%d", id),
		"customerId": fmt.Sprintf("c-%d", r.Intn(5)),
		"status":     statuses[r.Intn(len(statuses))],
		"placedAt":   int64(1_700_000_000_000 + r.Intn(1_000_000_000)),
	}
	if r.Intn(4) > 0 {
		st["totalCents"] = int64(r.Intn(100000))
	}
	var items []map[string]any
	for i := 0; i < r.Intn(5); i++ {
		el := map[string]any{"line": int32(i + 1), "sku": fmt.Sprintf("s-%d", r.Intn(4)), "quantity": int64(1 + r.Intn(3))}
		if r.Intn(2) == 0 {
			el["name"] = fmt.Sprintf("name \x00%d", r.Intn(9))
			el["priceCents"] = int64(r.Intn(1000))
		}
		items = append(items, el)
	}
	if items != nil {
		st["items"] = items
	}
	return st
}

// primaryRow is the primary row a store holds after d's primary cells
// were written at ts (in the order Derive gives them).
func primaryRow(d *Derived, ts int64) store.Row {
	row := store.Row{Key: d.PrimaryKey}
	for _, c := range d.Primary {
		row.Cells = append(row.Cells, store.Cell{Row: d.PrimaryKey, Family: c.Family, Qualifier: c.Qualifier, Timestamp: ts, Value: c.Value})
	}
	return row
}

// The primary row alone is enough to recompute every copy: Derive, then
// ReadState on the cells written, then Derive again gives the same result.
func TestDeriveReadStateRoundTrip(t *testing.T) {
	p := ordersPlan(t)
	ent := p.Entity("order")
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 500; i++ {
		st := randomOrder(r, i)
		d1, err := Derive(p, ent, st)
		if err != nil {
			t.Fatalf("derive %v: %v", st, err)
		}
		row := primaryRow(d1, 5)
		back, err := ReadState(p, ent, p.Primary("order"), row)
		if err != nil {
			t.Fatalf("read state: %v", err)
		}
		if !back.Exists() || back.Version != 5 {
			t.Fatalf("state %+v", back)
		}
		d2, err := Derive(p, ent, back.Values)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d1, d2) {
			t.Fatalf("state %v:\nfirst  %+v\nsecond %+v", st, d1, d2)
		}
		// DeriveCopies is the same without the primary cells.
		c, err := DeriveCopies(p, ent, back.Values)
		if err != nil {
			t.Fatal(err)
		}
		if c.Primary != nil {
			t.Fatalf("DeriveCopies returned primary cells")
		}
		c.Primary = d1.Primary
		if !reflect.DeepEqual(d1, c) {
			t.Fatalf("state %v:\nDerive       %+v\nDeriveCopies %+v", st, d1, c)
		}
	}
}

func TestDeriveOrders(t *testing.T) {
	p := exactPlan(t)
	ent := p.Entity("order")
	st := map[string]any{"orderId": "o-1", "customerId": "c-1", "status": "OPEN", "placedAt": int64(86_400_000 * 3),
		"items": []map[string]any{
			{"line": int32(1), "sku": "a", "quantity": int64(2)},
			{"line": int32(2), "sku": "a", "quantity": int64(5)},
			{"line": int32(3), "sku": "b", "quantity": int64(1)},
		}}
	d, err := Derive(p, ent, st)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	units := map[string]int64{}
	for _, it := range d.Items {
		count[it.Table]++
		if it.Table == "daily_units" {
			n, err := CellInt64(it.Cells[0].Value)
			if err != nil {
				t.Fatal(err)
			}
			units[string(it.Row[len(it.Row)-1:])+string(it.Row)] += n
		}
		if it.Table == "orders_by_status" || it.Table == "orders_by_sku" || it.Table == "orders_by_product" {
			if string(it.Cells[0].Qualifier) != schema.RefQualifier && it.Table != "orders_by_sku" {
				t.Fatalf("%s row without ref cell: %+v", it.Table, it.Cells)
			}
		}
	}
	// one status row; one sku row per line (the key holds the line); one
	// lookup row per distinct sku; one exact contribution per (day, sku).
	want := map[string]int{"orders_by_status": 1, "orders_by_sku": 3, "orders_by_product": 2, "daily_units": 2}
	if !reflect.DeepEqual(count, want) {
		t.Fatalf("items per table %v, want %v", count, want)
	}
	var total int64
	for _, n := range units {
		total += n
	}
	if total != 8 {
		t.Fatalf("units %v, want 8 in all", units)
	}
	if len(d.Primary) != 4 { // d:s, i:1, i:2, i:3
		t.Fatalf("primary cells %+v", d.Primary)
	}
}

func TestElementRoundTripAndErrors(t *testing.T) {
	p := ordersPlan(t)
	ch := p.Entity("order").Child("items")
	el := map[string]any{"line": int32(-3), "sku": "", "name": "x\x00y", "quantity": int64(-1)}
	b, err := EncodeElement(ch, el)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeElement(ch, b)
	if err != nil || !reflect.DeepEqual(back, el) {
		t.Fatalf("back %v err %v", back, err)
	}
	for i := 0; i < len(b); i++ {
		if _, err := DecodeElement(ch, b[:i]); err == nil {
			t.Fatalf("truncated to %d bytes decoded without error", i)
		}
	}
	if _, err := DecodeElement(ch, append(b, 1)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestRefsRoundTrip(t *testing.T) {
	refs := []Ref{{Table: "b", Row: []byte{0, 1}}, {Table: "a", Row: []byte("r"), Family: "c", Qualifier: []byte("u\x00k")}}
	back, err := DecodeRefs(EncodeRefs(refs))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Table != "a" || back[1].Table != "b" || string(back[0].Qualifier) != "u\x00k" {
		t.Fatalf("%+v", back)
	}
	// Unsorted input is sorted in a copy: the caller's order stays, and the
	// encoding is the sorted list's.
	if refs[0].Table != "b" {
		t.Fatalf("EncodeRefs reordered its input: %+v", refs)
	}
	if !bytes.Equal(EncodeRefs(refs), EncodeRefs([]Ref{refs[1], refs[0]})) {
		t.Fatal("one set of refs encodes two ways")
	}
	if _, err := DecodeRefs([]byte{5, 1}); err == nil {
		t.Fatal("garbage decoded")
	}
}

func FuzzDecodeElement(f *testing.F) {
	p := ordersPlan(f)
	ch := p.Entity("order").Child("items")
	b, _ := EncodeElement(ch, map[string]any{"line": int32(1), "sku": "s", "quantity": int64(2)})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		el, err := DecodeElement(ch, b)
		if err != nil {
			return
		}
		again, err := EncodeElement(ch, el)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if string(again) != string(b) {
			t.Fatalf("decode/encode not canonical: %x -> %x", b, again)
		}
	})
}

func FuzzDecodeRefs(f *testing.F) {
	f.Add(EncodeRefs([]Ref{{Table: "t", Row: []byte("r")}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeRefs(b)
	})
}

// In mode bounded (the example's), a state's counts are no cells of its
// own but bounded increments, one per counter cell, merged per row: what
// the writer records in the Counted record and adds through the totals.
func TestDeriveBoundedCounts(t *testing.T) {
	p := ordersPlan(t)
	st := map[string]any{"orderId": "o-1", "customerId": "c-1", "status": "OPEN", "placedAt": int64(86_400_000 * 3),
		"items": []map[string]any{
			{"line": int32(1), "sku": "a", "quantity": int64(2)},
			{"line": int32(2), "sku": "a", "quantity": int64(5)},
			{"line": int32(3), "sku": "b", "quantity": int64(1)},
		}}
	d, err := Derive(p, p.Entity("order"), st)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range d.Items {
		if it.Table == "daily_units" {
			t.Fatalf("a bounded counter derived a cell: %+v", it)
		}
	}
	got := map[string]int64{}
	for _, in := range d.Increments {
		if in.Table != "daily_units" || !in.Bounded {
			t.Fatalf("increment %+v", in)
		}
		got[string(in.Row)] += in.Delta
	}
	if len(got) != 2 || len(d.Increments) != 2 {
		t.Fatalf("counts %v, want one per (day, sku)", got)
	}
	var total int64
	for _, n := range got {
		total += n
	}
	if total != 8 {
		t.Fatalf("counts %v, want 8 in all", got)
	}
}
