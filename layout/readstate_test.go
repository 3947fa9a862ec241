package layout

import (
	"bytes"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
)

// ReadStateSkipping leaves out exactly what it is told to: the skipped
// bookkeeping is empty, everything else is what ReadState reads.
func TestReadStateSkipping(t *testing.T) {
	p := ordersPlan(t)
	ent, prim := p.Entity("order"), p.Primary("order")
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 300; i++ {
		d, err := Derive(p, ent, randomOrder(r, i))
		if err != nil {
			t.Fatal(err)
		}
		row := store.Row{Key: d.PrimaryKey}
		book := BookFamily(prim)
		counted := &Counted{Stream: 1, Offset: int64(i + 1)}
		for _, in := range d.Increments {
			counted.Counts = append(counted.Counts, Count{Ref: Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}, Now: in.Delta})
		}
		row.Cells = append(row.Cells,
			store.Cell{Row: row.Key, Family: book, Qualifier: QualPending, Timestamp: 4, Value: EncodePending(d.Refs(), &Position{Stream: 7, Offset: int64(i)})},
			store.Cell{Row: row.Key, Family: book, Qualifier: QualCounted, Timestamp: 4, Value: EncodeCounted(counted)})
		for _, c := range d.Primary {
			row.Cells = append(row.Cells, store.Cell{Row: row.Key, Family: c.Family, Qualifier: c.Qualifier, Timestamp: 4, Value: c.Value})
		}
		full, err := ReadState(p, ent, prim, row)
		if err != nil {
			t.Fatal(err)
		}
		if full.Pending == nil || full.Counted == nil || full.WrittenBy == nil || *full.WrittenBy != (Position{7, int64(i)}) {
			t.Fatalf("row %d: ReadState read no pending refs or no counted record: %+v", i, full)
		}
		for _, skip := range []Skip{SkipPending, SkipCounted, SkipBookkeeping} {
			got, err := ReadStateSkipping(p, ent, prim, row, skip)
			if err != nil {
				t.Fatal(err)
			}
			want := *full
			if skip&SkipPending != 0 {
				want.Pending, want.WrittenBy = nil, nil
			}
			if skip&SkipCounted != 0 {
				want.Counted, want.CountedAt = nil, 0
			}
			if !reflect.DeepEqual(&want, got) {
				t.Fatalf("row %d, skip %b:\nwant %+v\ngot  %+v", i, skip, &want, got)
			}
		}
	}
}

// A state's live cells are the row's, newest version of each column, and Get
// finds each of them and nothing else.
func TestLiveCells(t *testing.T) {
	p := ordersPlan(t)
	ent, prim := p.Entity("order"), p.Primary("order")
	book := BookFamily(prim)
	d, err := Derive(p, ent, randomOrder(rand.New(rand.NewSource(1)), 1))
	if err != nil {
		t.Fatal(err)
	}
	key := d.PrimaryKey
	var row store.Row
	row.Key = key
	// Live qualifiers as the writer makes them, several versions each,
	// newest first as a read returns them.
	ref := ent.References[0]
	var quals [][]byte
	for i := 0; i < 5; i++ {
		quals = append(quals, LiveQualifier(ref, []byte{byte('a' + i)}, "name"))
	}
	for _, q := range quals {
		for ts := int64(9); ts >= 7; ts-- {
			row.Cells = append(row.Cells, store.Cell{Row: key, Family: book, Qualifier: q, Timestamp: ts, Value: []byte{byte(ts)}})
		}
	}
	var live LiveCells
	for _, c := range row.Cells {
		if n := len(live); n == 0 || string(live[n-1].Qualifier) != string(c.Qualifier) {
			live = append(live, c)
		}
	}
	for _, q := range quals {
		c, ok := live.Get(q)
		if !ok || c.Timestamp != 9 || string(c.Qualifier) != string(q) {
			t.Fatalf("Get(%q) = %+v, %v; want its newest version", q, c, ok)
		}
	}
	if _, ok := live.Get(LiveQualifier(ref, []byte("zz"), "name")); ok {
		t.Fatalf("Get found a qualifier the row does not hold")
	}
	// ReadState keeps the same cells.
	st, err := ReadState(p, ent, prim, row)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Live, live) {
		t.Fatalf("ReadState live cells %+v, want %+v", st.Live, live)
	}
}

// A primary row holds one state's columns, all at its version. A column
// at an older version is one a writer of an older state put while the row
// was written from a state that never had it (two writers on one entity):
// it is no part of the state.
func TestReadStateLeavesOutOlderColumns(t *testing.T) {
	p := ordersPlan(t)
	ent, prim := p.Entity("order"), p.Primary("order")
	r := rand.New(rand.NewSource(7))
	left := 0
	for i := 0; i < 300; i++ {
		newer := randomOrder(r, i)
		older := randomOrder(r, i)
		older["orderId"], older["customerId"], older["placedAt"] = newer["orderId"], newer["customerId"], newer["placedAt"]
		dn, err := Derive(p, ent, newer)
		if err != nil {
			t.Fatal(err)
		}
		do, err := Derive(p, ent, older)
		if err != nil {
			t.Fatal(err)
		}
		clean := store.Row{Key: dn.PrimaryKey}
		for _, c := range dn.Primary {
			clean.Cells = append(clean.Cells, store.Cell{Row: clean.Key, Family: c.Family, Qualifier: c.Qualifier, Timestamp: 5, Value: c.Value})
		}
		mixed := store.Row{Key: dn.PrimaryKey, Cells: append([]store.Cell(nil), clean.Cells...)}
		for _, c := range do.Primary {
			if !slices.ContainsFunc(clean.Cells, func(x store.Cell) bool { return x.Family == c.Family && bytes.Equal(x.Qualifier, c.Qualifier) }) {
				mixed.Cells = append(mixed.Cells, store.Cell{Row: mixed.Key, Family: c.Family, Qualifier: c.Qualifier, Timestamp: 3, Value: c.Value})
				left++
			}
		}
		slices.SortFunc(mixed.Cells, func(a, b store.Cell) int {
			if c := strings.Compare(a.Family, b.Family); c != 0 {
				return c
			}
			return bytes.Compare(a.Qualifier, b.Qualifier)
		})
		want, err := ReadState(p, ent, prim, clean)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadState(p, ent, prim, mixed)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want.Values, got.Values) || got.Version != 5 {
			t.Fatalf("row %d: with the older state's other columns at 3:\nwant %v\ngot  %v (version %d)", i, want.Values, got.Values, got.Version)
		}
	}
	if left < 100 {
		t.Fatalf("only %d older columns tried", left)
	}
}
