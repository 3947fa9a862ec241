package storetest

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/denorm/denorm/store"
)

var wideTests = []testCase{
	{"ColumnsOfWideRows", testColumnsOfWideRows},
}

// testColumnsOfWideRows reads a few columns of rows holding many, under
// every kind of delete marker, and checks the answer against the full row
// read and filtered here: a backend that seeks over unselected columns (the
// embedded one does, past a few) must not lose a marker or a version.
// Seeded, so a failure repeats.
func testColumnsOfWideRows(t *testing.T, e *env) {
	// "f" and "ff": one family name a prefix of the other.
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}, {Name: "ff", MaxVersions: 3}, {Name: "g"}}})
	r := rand.New(rand.NewSource(11))
	families := []string{"f", "ff", "g"}
	qual := func(i int) []byte {
		// Some qualifiers hold zero bytes (escaped by the embedded store),
		// one is empty (where family markers live).
		switch i % 7 {
		case 0:
			return []byte(fmt.Sprintf("q%03d\x00z", i))
		case 1:
			if i == 1 {
				return []byte{}
			}
		}
		return []byte(fmt.Sprintf("q%03d", i))
	}
	rows := []string{"w1", "w2", "w3"}
	for _, row := range rows {
		for _, f := range families {
			var ms []store.Mutation
			for i := 0; i < 40; i++ {
				for v := 0; v < 1+r.Intn(3); v++ {
					ms = append(ms, store.Mutation{Kind: store.Put, Family: f, Qualifier: qual(i), Timestamp: int64(1 + r.Intn(9)), Value: []byte(fmt.Sprintf("%s/%s/%d/%d", row, f, i, v))})
				}
			}
			e.mutate(name, store.RowMutation{Row: []byte(row), Mutations: ms})
			// Markers of every kind, in a second mutation so they apply to
			// the puts above.
			ms = ms[:0]
			if r.Intn(2) == 0 {
				ms = append(ms, store.Mutation{Kind: store.DeleteFamily, Family: f, Timestamp: int64(1 + r.Intn(4))})
			}
			for k := 0; k < 6; k++ {
				kind := []store.Kind{store.DeleteColumn, store.DeleteVersion}[r.Intn(2)]
				ms = append(ms, store.Mutation{Kind: kind, Family: f, Qualifier: qual(r.Intn(40)), Timestamp: int64(1 + r.Intn(9))})
			}
			e.mutate(name, store.RowMutation{Row: []byte(row), Mutations: ms})
		}
	}
	for round := 0; round < 20; round++ {
		var cols []store.Column
		for _, f := range families {
			switch r.Intn(4) {
			case 0: // not selected
			case 1:
				cols = append(cols, fam(f))
			default:
				for n := 1 + r.Intn(4); n > 0; n-- {
					cols = append(cols, store.Column{Family: f, Qualifier: qual(r.Intn(40))})
				}
			}
		}
		if len(cols) == 0 {
			cols = append(cols, store.Column{Family: "ff", Qualifier: qual(39)})
		}
		versions := 1 + r.Intn(3)
		what := fmt.Sprintf("round %d, columns %s, %d versions", round, columnsString(cols), versions)
		for _, row := range rows {
			whole := e.get(name, store.Get{Row: []byte(row), MaxVersions: versions})
			got := e.get(name, store.Get{Row: []byte(row), MaxVersions: versions, Columns: cols})
			expectCells(t, what+", get "+row, got.Cells, selectCells(whole.Cells, cols))
		}
		scanned := e.scan(name, store.Scan{MaxVersions: versions, Columns: cols})
		wholeScan := e.scan(name, store.Scan{MaxVersions: versions})
		var want []store.Row
		for _, w := range wholeScan {
			if cs := selectCells(w.Cells, cols); len(cs) > 0 {
				want = append(want, store.Row{Key: w.Key, Cells: cs})
			}
		}
		if len(scanned) != len(want) {
			t.Fatalf("%s, scan: %d rows, want %d", what, len(scanned), len(want))
		}
		for i := range want {
			expectCells(t, what+", scan "+string(want[i].Key), scanned[i].Cells, want[i].Cells)
		}
	}
}

// selectCells keeps the cells a column selection asks for.
func selectCells(cs []store.Cell, cols []store.Column) []store.Cell {
	var out []store.Cell
	for _, c := range cs {
		if slices.ContainsFunc(cols, func(s store.Column) bool {
			return s.Family == c.Family && (s.Qualifier == nil || bytes.Equal(s.Qualifier, c.Qualifier))
		}) {
			out = append(out, c)
		}
	}
	return out
}
