package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
)

// cloneRow deep-copies a row, since a scanner may reuse its buffers.
func cloneRow(r store.Row) store.Row {
	out := store.Row{Key: bytes.Clone(r.Key)}
	for _, c := range r.Cells {
		out.Cells = append(out.Cells, store.Cell{
			Row:       bytes.Clone(c.Row),
			Family:    c.Family,
			Qualifier: bytes.Clone(c.Qualifier),
			Timestamp: c.Timestamp,
			Value:     bytes.Clone(c.Value),
		})
	}
	return out
}

// cellLess is the order of cells inside a row: family, qualifier, then
// newest first.
func cellLess(a, b store.Cell) bool {
	if a.Family != b.Family {
		return a.Family < b.Family
	}
	if c := bytes.Compare(a.Qualifier, b.Qualifier); c != 0 {
		return c < 0
	}
	return a.Timestamp > b.Timestamp
}

// checkRowShape reports rows whose cells are out of order, carry another
// row's key, or repeat a coordinate.
func checkRowShape(t testing.TB, r store.Row) {
	t.Helper()
	for i, c := range r.Cells {
		if !bytes.Equal(c.Row, r.Key) {
			t.Errorf("row %s: cell %d carries row key %s", store.Printable(r.Key), i, store.Printable(c.Row))
		}
		if i > 0 && !cellLess(r.Cells[i-1], c) {
			t.Errorf("row %s: cells out of order or repeated: %s then %s",
				store.Printable(r.Key), cellString(r.Cells[i-1]), cellString(c))
		}
	}
}

// cellString renders a cell as family:qualifier@ts=value, with bytes made
// printable, so that failures read like the HBase shell.
func cellString(c store.Cell) string {
	return fmt.Sprintf("%s:%s@%d=%s", c.Family, store.Printable(c.Qualifier), c.Timestamp, store.Printable(c.Value))
}

func cellsString(cs []store.Cell) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = cellString(c)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// rowsString renders rows one per line, key first.
func rowsString(rows []store.Row) string {
	var sb strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&sb, "%s %s\n", store.Printable(r.Key), cellsString(r.Cells))
	}
	return sb.String()
}

// keysOf lists row keys, printable, in the order given.
func keysOf(rows []store.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = store.Printable(r.Key)
	}
	return out
}

// cellSpec is a compact way to write expected cells in tests:
// "f:q@ts=value".
func cells(row string, specs ...string) []store.Cell {
	out := make([]store.Cell, 0, len(specs))
	for _, s := range specs {
		colon := strings.IndexByte(s, ':')
		at := strings.IndexByte(s[colon+1:], '@') + colon + 1
		eq := strings.IndexByte(s[at:], '=') + at
		if colon < 0 || at <= colon || eq <= at {
			panic("storetest: bad cell spec " + s) // a typo in the suite itself
		}
		var ts int64
		if _, err := fmt.Sscan(s[at+1:eq], &ts); err != nil {
			panic("storetest: bad timestamp in cell spec " + s)
		}
		out = append(out, store.Cell{
			Row: []byte(row), Family: s[:colon], Qualifier: []byte(s[colon+1 : at]),
			Timestamp: ts, Value: []byte(s[eq+1:]),
		})
	}
	return out
}

// sameCells compares two cell lists exactly, timestamps and values included.
func sameCells(got, want []store.Cell) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Family != w.Family || !bytes.Equal(g.Qualifier, w.Qualifier) || g.Timestamp != w.Timestamp ||
			!bytes.Equal(g.Value, w.Value) || !bytes.Equal(g.Row, w.Row) {
			return false
		}
	}
	return true
}

// expectCells fails the test when got differs from want.
func expectCells(t testing.TB, what string, got, want []store.Cell) {
	t.Helper()
	if !sameCells(got, want) {
		t.Errorf("%s:\n got  %s\n want %s", what, cellsString(got), cellsString(want))
	}
}

func expectKeys(t testing.TB, what string, rows []store.Row, want ...string) {
	t.Helper()
	got := keysOf(rows)
	wantP := make([]string, len(want))
	for i, w := range want {
		wantP[i] = store.Printable([]byte(w))
	}
	if !slices.Equal(got, wantP) {
		t.Errorf("%s: row keys\n got  %v\n want %v", what, got, wantP)
	}
}
