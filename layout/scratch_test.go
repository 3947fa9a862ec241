package layout

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// A Scratch derives what DeriveCopies and DeriveTable derive, state after
// state, though each derive overwrites the buffers of the one before; and
// what it returned stays right until the next call.
func TestScratchDerivesTheSame(t *testing.T) {
	for _, p := range []*schema.Plan{ordersPlan(t), exactPlan(t)} {
		ent := p.Entity("order")
		r := rand.New(rand.NewSource(11))
		var sc Scratch
		for i := 0; i < 2000; i++ {
			st := randomOrder(r, i)
			want, err := DeriveCopies(p, ent, st)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sc.DeriveCopies(p, ent, st)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nilIfEmptyDerived(want), nilIfEmptyDerived(got)) {
				t.Fatalf("state %v:\nDeriveCopies %+v\nScratch      %+v", st, want, got)
			}
			tab := p.Tables[r.Intn(len(p.Tables))]
			if tab.Entity != ent.Name {
				continue
			}
			want, err = DeriveTable(p, ent, tab, st)
			if err != nil {
				t.Fatal(err)
			}
			if got, err = sc.DeriveTable(p, ent, tab, st); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nilIfEmptyDerived(want), nilIfEmptyDerived(got)) {
				t.Fatalf("state %v, table %s:\nDeriveTable %+v\nScratch     %+v", st, tab.Name, want, got)
			}
		}
	}
}

// nilIfEmptyDerived makes empty lists nil: a Scratch keeps its (empty)
// buffers where a fresh derive has none.
func nilIfEmptyDerived(d *Derived) *Derived {
	c := *d
	c.Items = nilIfEmpty(c.Items)
	c.Increments = nilIfEmpty(c.Increments)
	return &c
}

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
			store.Cell{Row: row.Key, Family: book, Qualifier: QualPending, Timestamp: 4, Value: EncodeRefs(d.Refs())},
			store.Cell{Row: row.Key, Family: book, Qualifier: QualCounted, Timestamp: 4, Value: EncodeCounted(counted)})
		for _, c := range d.Primary {
			row.Cells = append(row.Cells, store.Cell{Row: row.Key, Family: c.Family, Qualifier: c.Qualifier, Timestamp: 4, Value: c.Value})
		}
		full, err := ReadState(p, ent, prim, row)
		if err != nil {
			t.Fatal(err)
		}
		if full.Pending == nil || full.Counted == nil {
			t.Fatalf("row %d: ReadState read no pending refs or no counted record: %+v", i, full)
		}
		for _, skip := range []Skip{SkipPending, SkipCounted, SkipBookkeeping} {
			got, err := ReadStateSkipping(p, ent, prim, row, skip)
			if err != nil {
				t.Fatal(err)
			}
			want := *full
			if skip&SkipPending != 0 {
				want.Pending = nil
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
