package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
)

var limitTests = []testCase{
	{"CellTooBig", testCellTooBig},
	{"RowTooBig", testRowTooBig},
}

func testCellTooBig(t *testing.T, e *env) {
	limit := e.h.MaxCellSize
	if limit > MaxTestableLimit {
		t.Skipf("MaxCellSize %d is over %d: too big to prove cheaply", limit, MaxTestableLimit)
	}
	name := e.simple(1, "f")
	row := []byte("big\x00cell")
	err := e.st.Mutate(e.ctx, name, store.RowMutation{Row: row, Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("small"), Timestamp: 1, Value: []byte("s")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("huge"), Timestamp: 1, Value: make([]byte, limit+1)},
	}})
	if !errors.Is(err, store.ErrCellTooBig) {
		t.Fatalf("put of a %d-byte value with a %d-byte limit: err = %v, want ErrCellTooBig", limit+1, limit, err)
	}
	msg := err.Error()
	for _, part := range []string{store.Printable(row), "f", "huge"} {
		if !strings.Contains(msg, part) {
			t.Errorf("the error %q does not name %q", msg, part)
		}
	}
	if r := e.get(name, store.Get{Row: row}); !r.Empty() {
		t.Errorf("the refused mutation partly landed: %s", cellsString(r.Cells))
	}
	// Comfortably under the limit (the limit may count the key as well).
	e.put(name, string(row), "f", "half", 1, string(make([]byte, limit/2)))
	if c, ok := e.get(name, store.Get{Row: row}).Latest("f", []byte("half")); !ok || len(c.Value) != limit/2 {
		t.Errorf("a %d-byte cell did not round-trip (found %v, %d bytes)", limit/2, ok, len(c.Value))
	}
}

func testRowTooBig(t *testing.T, e *env) {
	limit := e.h.MaxRowSize
	if limit > MaxTestableLimit {
		t.Skipf("MaxRowSize %d is over %d: too big to write past cheaply", limit, MaxTestableLimit)
	}
	name := e.simple(1, "f")
	// HBase counts a row's size per family, so the whole excess goes in one.
	cell := min(e.h.MaxCellSize/2, limit/4, 1<<20)
	if cell < 1 {
		cell = 1
	}
	row := []byte("wide\xffrow")
	value := make([]byte, cell)
	var written int
	for i := 0; written <= 2*limit; i++ {
		e.put(name, string(row), "f", fmt.Sprintf("q%06d", i), 1, string(value))
		written += cell
	}
	e.put(name, "small", "f", "q", 1, "s")

	_, err := e.st.Get(e.ctx, name, store.Get{Row: row})
	if !errors.Is(err, store.ErrRowTooBig) {
		t.Errorf("Get of a row of %d bytes with a %d-byte limit: err = %v, want ErrRowTooBig", written, limit, err)
	} else if !strings.Contains(err.Error(), store.Printable(row)) {
		t.Errorf("the error %q does not name the row %s", err, store.Printable(row))
	}
	_, err = store.GetMany(e.ctx, e.st, name, []store.Get{{Row: []byte("small")}, {Row: row}})
	if !errors.Is(err, store.ErrRowTooBig) {
		t.Errorf("GetMany of the small row and a row of %d bytes with a %d-byte limit: err = %v, want ErrRowTooBig", written, limit, err)
	}
	_, err = scanAll(e.ctx, e.st, name, store.Scan{})
	if !errors.Is(err, store.ErrRowTooBig) {
		t.Errorf("Scan over a row of %d bytes with a %d-byte limit: err = %v, want ErrRowTooBig", written, limit, err)
	}
	// Other rows stay readable.
	expectCells(t, "the small row", e.get(name, store.Get{Row: []byte("small")}).Cells, cells("small", "f:q@1=s"))
}
