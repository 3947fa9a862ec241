package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/denorm/denorm/store"
)

var rowTests = []testCase{
	{"UnsignedRowOrder", testUnsignedRowOrder},
	{"QualifierOrderAndEmptyQualifier", testQualifierOrder},
	{"EmptyValueIsACell", testEmptyValue},
	{"GetMissingRow", testGetMissingRow},
	{"RowKeyAndTimestampLimits", testKeyLimits},
}

// awkwardKeys are row keys whose order differs between signed and unsigned
// bytes, or that are prefixes of each other.
var awkwardKeys = []string{"\xff", "a", "a\x00", "ab", "\x00", "\x00\x00", "\x7f", "\x80", "\xff\xff", "b", "a\xff", "A"}

func testUnsignedRowOrder(t *testing.T, e *env) {
	name := e.simple(1, "f")
	for i, k := range awkwardKeys {
		e.put(name, k, "f", "q", 10, fmt.Sprint(i))
	}
	want := slices.Clone(awkwardKeys)
	slices.SortFunc(want, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })

	expectKeys(t, "full scan", e.scan(name, store.Scan{}), want...)
	rev := slices.Clone(want)
	slices.Reverse(rev)
	expectKeys(t, "full reverse scan", e.scan(name, store.Scan{Reverse: true}), rev...)

	for i, k := range awkwardKeys {
		r := e.get(name, store.Get{Row: []byte(k)})
		expectCells(t, "Get "+store.Printable([]byte(k)), r.Cells, cells(k, "f:q@10="+fmt.Sprint(i)))
	}
	// A scan starting at a prefix includes the longer keys that follow it.
	expectKeys(t, "scan [a, b)", e.scan(name, store.Scan{Start: []byte("a"), Stop: []byte("b")}), "a", "a\x00", "ab", "a\xff")
	expectKeys(t, "scan [a\\x00, a\\xff)", e.scan(name, store.Scan{Start: []byte("a\x00"), Stop: []byte("a\xff")}), "a\x00", "ab")
	expectKeys(t, "scan [\\xff, end)", e.scan(name, store.Scan{Start: []byte("\xff")}), "\xff", "\xff\xff")
	expectKeys(t, "scan [start, \\x00\\x00)", e.scan(name, store.Scan{Stop: []byte("\x00\x00")}), "\x00")
}

func testQualifierOrder(t *testing.T, e *env) {
	name := e.simple(1, "f", "g")
	row := "r"
	e.mutate(name, store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "g", Qualifier: []byte("a"), Timestamp: 5, Value: []byte("g")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("\xff"), Timestamp: 5, Value: []byte("ff")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("a"), Timestamp: 5, Value: []byte("a")},
		{Kind: store.Put, Family: "f", Qualifier: []byte(""), Timestamp: 5, Value: []byte("empty")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("\x00"), Timestamp: 5, Value: []byte("zero")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("a\x00"), Timestamp: 5, Value: []byte("a0")},
	}})
	want := cells(row, "f:@5=empty", "f:\x00@5=zero", "f:a@5=a", "f:a\x00@5=a0", "f:\xff@5=ff", "g:a@5=g")
	expectCells(t, "Get", e.get(name, store.Get{Row: []byte(row)}).Cells, want)
	rows := e.scan(name, store.Scan{})
	if len(rows) != 1 {
		t.Fatalf("scan: %d rows, want 1:\n%s", len(rows), rowsString(rows))
	}
	expectCells(t, "Scan", rows[0].Cells, want)
	// The empty qualifier is a column of its own, selectable by itself.
	got := e.get(name, store.Get{Row: []byte(row), Columns: []store.Column{{Family: "f", Qualifier: []byte{}}}})
	expectCells(t, "Get f: (empty qualifier)", got.Cells, cells(row, "f:@5=empty"))
}

func testEmptyValue(t *testing.T, e *env) {
	name := e.simple(1, "f")
	e.put(name, "r", "f", "q", 7, "")
	r := e.get(name, store.Get{Row: []byte("r")})
	expectCells(t, "Get of a cell with an empty value", r.Cells, cells("r", "f:q@7="))
	expectKeys(t, "scan", e.scan(name, store.Scan{}), "r")
}

func testGetMissingRow(t *testing.T, e *env) {
	name := e.simple(1, "f", "g")
	r, err := e.st.Get(e.ctx, name, store.Get{Row: []byte("nothing here")})
	if err != nil {
		t.Fatalf("Get of a missing row: err = %v, want none", err)
	}
	if !r.Empty() {
		t.Errorf("Get of a missing row: %s, want no cells", cellsString(r.Cells))
	}
	// A row that exists but has nothing in the selected family reads empty.
	e.put(name, "r", "f", "q", 1, "v")
	if r := e.get(name, store.Get{Row: []byte("r"), Columns: []store.Column{fam("g")}}); !r.Empty() {
		t.Errorf("Get of family g: %s, want no cells", cellsString(r.Cells))
	}
	if r := e.get(name, store.Get{Row: []byte("r"), Columns: []store.Column{col("f", "other")}}); !r.Empty() {
		t.Errorf("Get of column f:other: %s, want no cells", cellsString(r.Cells))
	}
	// Neighbouring keys do not leak into a Get.
	for _, k := range []string{"\x00", "r\x00", "q\xff", "s"} {
		if r := e.get(name, store.Get{Row: []byte(k)}); !r.Empty() {
			t.Errorf("Get %s: %s, want no cells", store.Printable([]byte(k)), cellsString(r.Cells))
		}
	}
}

// fill writes n rows "r00".."r<n-1>" with one cell each, at ts 1.
func (e *env) fill(table string, n int) []string {
	e.t.Helper()
	var ms []store.RowMutation
	var keys []string
	for i := range n {
		k := fmt.Sprintf("r%02d", i)
		keys = append(keys, k)
		ms = append(ms, store.RowMutation{Row: []byte(k), Mutations: []store.Mutation{
			{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte(k)},
		}})
	}
	errs, err := e.st.Batch(e.ctx, table, ms)
	if err != nil {
		e.t.Fatalf("Batch: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			e.t.Fatalf("Batch row %s: %v", keys[i], err)
		}
	}
	return keys
}

// scanner opens a scanner or fails the test.
func (e *env) scanner(table string, s store.Scan) store.Scanner {
	e.t.Helper()
	sc, err := e.st.Scan(e.ctx, table, s)
	if err != nil {
		e.t.Fatalf("Scan(%s, %s): %v", table, describeScan(s), err)
	}
	return sc
}

// next advances a scanner and copies its row.
func next(ctx context.Context, sc store.Scanner) (store.Row, bool) {
	if !sc.Next(ctx) {
		return store.Row{}, false
	}
	return cloneRow(sc.Row()), true
}

// maxRowKey is HBase's limit on a row key's length (Short.MAX_VALUE).
const maxRowKey = 32767

// testKeyLimits checks what HBase's client refuses outright, so that a
// schema that works on the embedded store cannot fail on HBase.
func testKeyLimits(t *testing.T, e *env) {
	name := e.simple(1, "f")
	putRow := func(row []byte, ts int64) error {
		return e.st.Mutate(e.ctx, name, store.RowMutation{Row: row, Mutations: []store.Mutation{
			{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: ts, Value: []byte("v")},
		}})
	}
	if err := putRow(nil, 1); err == nil {
		t.Errorf("a put with an empty row key succeeded; HBase refuses it")
	}
	// Long keys are legal; errors about them are not printed whole.
	long := bytes.Repeat([]byte{'k'}, 4096)
	if err := putRow(long, 1); err != nil {
		t.Errorf("a put with a %d-byte row key: %.200s", len(long), err)
	} else if r := e.get(name, store.Get{Row: long}); r.Empty() {
		t.Errorf("the %d-byte row key did not read back", len(long))
	}
	if err := putRow(bytes.Repeat([]byte{'k'}, maxRowKey+1), 1); err == nil {
		t.Errorf("a put with a %d-byte row key succeeded; HBase's limit is %d", maxRowKey+1, maxRowKey)
	}
	if err := putRow([]byte("neg"), -1); err == nil {
		t.Errorf("a put with timestamp -1 succeeded; HBase refuses negative timestamps")
	}
	if r := e.get(name, store.Get{Row: []byte("neg")}); !r.Empty() {
		t.Errorf("a refused put landed: %s", cellsString(r.Cells))
	}
}
