package event

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/schema"
)

func ordersPlan(t testing.TB) *schema.Plan {
	t.Helper()
	p, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatalf("load orders example: %v", err)
	}
	return p
}

const goodOrder = `{"id":"e1","entity":"order","key":"o-1","version":3,"op":"upsert",
"state":{"orderId":"o-1","customerId":"c-9","status":"PAID","placedAt":"2026-10-04T10:00:00Z","totalCents":1234,
"items":[{"line":1,"sku":"s-1","quantity":2,"name":"Widget","priceCents":617}]},"hints":{"status":"OPEN"}}`

func TestDecodeGood(t *testing.T) {
	p := ordersPlan(t)
	ev, err := Decode(p, []byte(strings.ReplaceAll(goodOrder, "\n", "")))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if ev.Entity != "order" || ev.Version != 3 || ev.Op != Upsert || ev.ID != "e1" {
		t.Fatalf("header wrong: %+v", ev)
	}
	if ev.Key["orderId"] != "o-1" {
		t.Fatalf("key = %v", ev.Key)
	}
	if got, want := ev.State["placedAt"], time.Date(2026, 10, 4, 10, 0, 0, 0, time.UTC).UnixMilli(); got != want {
		t.Fatalf("placedAt normalized to %v (%T), want epoch ms", got, got)
	}
	if got := ev.State["totalCents"]; got != int64(1234) {
		t.Fatalf("totalCents = %v (%T)", got, got)
	}
	items := ev.State["items"].([]map[string]any)
	if len(items) != 1 || items[0]["line"] != int32(1) || items[0]["quantity"] != int64(2) {
		t.Fatalf("items = %#v", items)
	}
	if ev.Hints["status"] != "OPEN" {
		t.Fatalf("hints = %v", ev.Hints)
	}
}

func TestDecodeDelete(t *testing.T) {
	ev, err := Decode(ordersPlan(t), []byte(`{"entity":"order","key":"o-1","version":9,"op":"delete"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Op != Delete || ev.State != nil {
		t.Fatalf("%+v", ev)
	}
}

// Every class of bad input is refused with the field it concerns.
func TestDecodeBad(t *testing.T) {
	p := ordersPlan(t)
	over := `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[` +
		strings.TrimSuffix(strings.Repeat(`{"line":L},`, 201), ",") + `]}}`
	n := 0
	over = replaceEach(over, "L", func() string { n++; return itoa(n) })
	cases := []struct {
		name, line, field, reason string
	}{
		{"malformed JSON", `{"entity":"order",`, "", "malformed"},
		{"not an object", `[1,2]`, "", "an event is a JSON object"},
		{"two values", `{"entity":"order","key":"o","version":1,"op":"delete"} {}`, "", "more than one"},
		{"unknown top-level field", `{"entity":"order","key":"o","version":1,"op":"delete","colour":1}`, "", "unknown field"},
		{"missing entity", `{"key":"o","version":1}`, "entity", "missing"},
		{"unknown entity", `{"entity":"invoice","key":"o","version":1}`, "entity", "unknown entity"},
		{"missing key", `{"entity":"order","version":1,"op":"delete"}`, "key", "missing"},
		{"missing version", `{"entity":"order","key":"o","op":"delete"}`, "version", "missing"},
		{"version not integer", `{"entity":"order","key":"o","version":"x","op":"delete"}`, "version", "integer"},
		{"version fraction", `{"entity":"order","key":"o","version":1.5,"op":"delete"}`, "version", "integer"},
		{"version zero", `{"entity":"order","key":"o","version":0,"op":"delete"}`, "version", "out of range"},
		{"bad op", `{"entity":"order","key":"o","version":1,"op":"merge"}`, "op", "upsert or delete"},
		{"upsert without state", `{"entity":"order","key":"o","version":1}`, "state", "missing"},
		{"delete with state", `{"entity":"order","key":"o","version":1,"op":"delete","state":{}}`, "state", "no state"},
		{"wrong type", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","totalCents":"lots"}}`, "state.totalCents", "int64"},
		{"object for scalar", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","status":{"a":1}}}`, "state.status", "want string"},
		{"unknown field", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","colour":"red"}}`, "state.colour", "no field"},
		{"key not in state", `{"entity":"order","key":"o","version":1,"state":{"status":"OPEN"}}`, "state.orderId", "missing"},
		{"key mismatch", `{"entity":"order","key":"o","version":1,"state":{"orderId":"p"}}`, "state.orderId", "does not match"},
		{"children not a list", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":{}}}`, "state.items", "want a list"},
		{"child without key", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[{"sku":"s"}]}}`, "state.items[0].line", "missing"},
		{"child key twice", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[{"line":1},{"line":1}]}}`, "state.items[1].line", "repeats"},
		{"child wrong type", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[{"line":1,"quantity":true}]}}`, "state.items[0].quantity", "int64"},
		{"child unknown field", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[{"line":1,"colour":1}]}}`, "state.items[0].colour", "no field"},
		{"child list over bound", over, "state.items", "over the declared maximum of 200"},
		{"hint unknown", `{"entity":"order","key":"o","version":1,"op":"delete","hints":{"colour":"x"}}`, "hints.colour", "no field"},
		{"hint wrong type", `{"entity":"order","key":"o","version":1,"op":"delete","hints":{"placedAt":"yesterday"}}`, "hints.placedAt", "timestamp"},
		{"int32 overflow", `{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[{"line":4294967296}]}}`, "state.items[0].line", "int32"},
		{"empty line", `   `, "", "empty"},
		{"version as a string", `{"entity":"order","key":"o","version":"2","op":"delete"}`, "version", "want a JSON integer, got the string"},
		{"invalid UTF-8 in a string", "{\"entity\":\"order\",\"key\":\"o\xff\",\"version\":1,\"op\":\"delete\"}", "", "invalid UTF-8 at byte 26"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(p, []byte(c.line))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Field != c.field || !strings.Contains(e.Reason, c.reason) {
				t.Fatalf("got field %q reason %q; want field %q reason containing %q", e.Field, e.Reason, c.field, c.reason)
			}
		})
	}
}

func replaceEach(s, old string, next func() string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(next())
		s = s[i+len(old):]
	}
}

func itoa(n int) string { return fmtInt(n) }
func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// fuzzSeeds start both fuzz targets: an order, a delete, a key object with
// a child list, a product.
var fuzzSeeds = []string{
	strings.ReplaceAll(goodOrder, "\n", ""),
	`{"entity":"order","key":"o-1","version":9,"op":"delete"}`,
	`{"entity":"order","key":{"orderId":"x"},"version":1,"state":{"orderId":"x","items":[{"line":1}]}}`,
	`{"entity":"product","key":"s","version":2,"state":{"sku":"s","name":"n","priceCents":1}}`,
}

func FuzzDecode(f *testing.F) {
	p := ordersPlan(f)
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := Decode(p, line)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if ev.Version < 1 || ev.Entity == "" || len(ev.Key) == 0 {
			t.Fatalf("accepted an invalid event: %+v", ev)
		}
		if ev.Op == Upsert && ev.State == nil {
			t.Fatalf("upsert without state accepted")
		}
	})
}
