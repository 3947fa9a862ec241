package storetest

import (
	"errors"
	"testing"

	"github.com/denorm/denorm/store"
)

var closedTests = []testCase{
	{"ClosedStore", testClosedStore},
}

// testClosedStore closes a second store from the harness, so that the
// subtest's own store (and the tables of other subtests on a shared
// server) are untouched.
func testClosedStore(t *testing.T, e *env) {
	st := e.h.New(t)
	name := e.tableName()
	if err := st.CreateTable(e.ctx, store.TableSpec{Name: name, Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := st.Mutate(e.ctx, name, rowPut(k, "f", k)); err != nil {
			t.Fatalf("Mutate: %v", err)
		}
	}
	// A scanner left open across Close must not crash anything.
	sc, err := st.Scan(e.ctx, name, store.Scan{Caching: 1})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if !sc.Next(e.ctx) {
		t.Fatalf("Next: no row, err %v", sc.Err())
	}
	if err := st.DropTable(e.ctx, name); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for sc.Next(e.ctx) {
	}
	_ = sc.Err() // either the rows it had or ErrClosed: both are fine
	_ = sc.Close()

	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: err = %v, want ErrClosed", op, err)
		}
	}
	_, err = st.Get(e.ctx, name, store.Get{Row: []byte("a")})
	check("Get", err)
	_, err = store.GetMany(e.ctx, st, name, []store.Get{{Row: []byte("a")}, {Row: []byte("b")}})
	check("GetMany", err)
	check("Mutate", st.Mutate(e.ctx, name, rowPut("d", "f", "d")))
	_, err = st.ListTables(e.ctx)
	check("ListTables", err)
	_, err = scanAll(e.ctx, st, name, store.Scan{})
	check("Scan", err)
	check("CreateTable", st.CreateTable(e.ctx, store.TableSpec{Name: name, Families: []store.FamilySpec{{Name: "f"}}}))
}
