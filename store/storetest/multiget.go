package storetest

import (
	"bytes"
	"testing"

	"github.com/denorm/denorm/store"
)

var getManyTests = []testCase{
	{"GetManyInRequestOrder", testGetManyOrder},
}

// testGetManyOrder reads rows out of key order, with missing rows, a
// repeated row under different selections and an emptied row in between:
// each answer sits at its request's place and is what Get says of it.
// store.GetMany is called, so a backend without a multi-get is checked
// through the fallback.
func testGetManyOrder(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}, {Name: "g"}}})
	e.mutate(name, store.RowMutation{Row: []byte("a"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("a1")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 2, Value: []byte("a2")},
		{Kind: store.Put, Family: "g", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("ax")},
	}})
	e.put(name, "b\x00", "f", "q", 5, "b0")
	e.put(name, "c", "g", "y", 3, "c")
	e.put(name, "\xff", "f", "\x00", 1, "ff")
	e.put(name, "gone", "f", "q", 1, "gone")
	e.mutate(name, store.RowMutation{Row: []byte("gone"), Mutations: []store.Mutation{{Kind: store.DeleteRow, Timestamp: 1}}})

	gets := []store.Get{
		{Row: []byte("c")},
		{Row: []byte("missing")},
		{Row: []byte("a")},
		{Row: []byte("\xff")},
		{Row: []byte("b\x00")},
		{Row: []byte("a"), Columns: []store.Column{col("f", "q")}, MaxVersions: 2},
		{Row: []byte("gone")},
		{Row: []byte("a"), MaxVersions: 3, TimeRange: store.TimeRange{Min: 2}},
		{Row: []byte("b")}, // a prefix of "b\x00", and missing
		{Row: []byte("a"), Columns: []store.Column{fam("g")}},
		{Row: []byte("c")},
	}
	want := [][]store.Cell{
		cells("c", "g:y@3=c"),
		nil,
		cells("a", "f:q@2=a2", "g:x@1=ax"),
		cells("\xff", "f:\x00@1=ff"),
		cells("b\x00", "f:q@5=b0"),
		cells("a", "f:q@2=a2", "f:q@1=a1"),
		nil,
		cells("a", "f:q@2=a2"),
		nil,
		cells("a", "g:x@1=ax"),
		cells("c", "g:y@3=c"),
	}
	rows, err := store.GetMany(e.ctx, e.st, name, gets)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	if len(rows) != len(gets) {
		t.Fatalf("GetMany: %d rows for %d gets", len(rows), len(gets))
	}
	for i, g := range gets {
		what := "GetMany answer " + itoa(int64(i)) + " (row " + store.Printable(g.Row) + ")"
		r := rows[i]
		if !bytes.Equal(r.Key, g.Row) {
			t.Errorf("%s: key %s", what, store.Printable(r.Key))
		}
		checkRowShape(t, r)
		expectCells(t, what, r.Cells, want[i])
		expectCells(t, what+" against Get", r.Cells, e.get(name, g).Cells)
	}
	// The rows are the caller's: changing one leaves the others alone.
	if len(rows[0].Cells) == 1 && len(rows[10].Cells) == 1 {
		rows[0].Cells[0].Value[0] = 'X'
		expectCells(t, "the repeat of row c after the first was changed", rows[10].Cells, cells("c", "g:y@3=c"))
	}

	checkRowsApart(t, e, name, gets)

	empty, err := store.GetMany(e.ctx, e.st, name, nil)
	if err != nil || len(empty) != 0 {
		t.Errorf("GetMany of no rows: %d rows, err %v; want none and no error", len(empty), err)
	}
}

// checkRowsApart checks that the rows of a multi-get are apart (RowsApart).
func checkRowsApart(t *testing.T, e *env, name string, gets []store.Get) {
	t.Helper()
	rows, err := store.GetMany(e.ctx, e.st, name, gets)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	RowsApart(t, "GetMany answer", rows)
}

// RowsApart appends to every slice of each row (its key, its cells, each
// cell's qualifier and value), as a caller owning the rows may, and then
// checks that every row is as it was: a backend that builds the rows of
// one call in shared arrays must cap each slice at its length, or an
// append writes into another row, or into another slice of the same row.
// The appends are not kept, so each row is compared with what it was.
// what names the rows in failures.
func RowsApart(t testing.TB, what string, rows []store.Row) {
	t.Helper()
	want := make([]store.Row, len(rows))
	for i, r := range rows {
		want[i] = r.Clone()
	}
	junk := []byte("junk")
	for _, r := range rows {
		_ = append(r.Key, junk...)
		for _, c := range r.Cells {
			_ = append(c.Qualifier, junk...)
			_ = append(c.Value, junk...)
		}
		_ = append(r.Cells, store.Cell{Row: junk, Family: "junk", Qualifier: junk, Value: junk})
	}
	for k := range rows {
		what := what + " " + itoa(int64(k)) + " after appending to every slice of every row"
		if !bytes.Equal(rows[k].Key, want[k].Key) {
			t.Fatalf("%s: key %s, want %s", what, store.Printable(rows[k].Key), store.Printable(want[k].Key))
		}
		expectCells(t, what, rows[k].Cells, want[k].Cells)
	}
}
