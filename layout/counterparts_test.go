package layout

import (
	"testing"

	"github.com/denorm/denorm/store"
)

// A row's state cells merge to the sum of their totals and the largest
// sequence any gives per stream; of a cell's versions, the newest counts.
func TestCounterCellsMerge(t *testing.T) {
	part := func(stream uint64, off, settled, total int64) []byte {
		s := &CounterState{}
		s.Add("c", []byte("u"), total)
		s.Advance(stream, off)
		s.Settle(stream, settled)
		return EncodeCounterState(s)
	}
	base := &CounterState{}
	base.Add("c", []byte("u"), 100)
	base.Advance(1, 50) // written before parts: ahead of stream 1's part
	row := store.Row{Key: []byte("r"), Cells: []store.Cell{
		{Family: "c", Qualifier: QualCounterState, Timestamp: 5, Value: EncodeCounterState(base)},
		{Family: "c", Qualifier: CounterPartQualifier(1), Timestamp: 9, Value: part(1, 40, 30, 7)},
		{Family: "c", Qualifier: CounterPartQualifier(1), Timestamp: 8, Value: part(1, 90, 80, 1000)}, // older version
		{Family: "c", Qualifier: CounterPartQualifier(2), Timestamp: 3, Value: part(2, 12, 10, -4)},
		{Family: "c", Qualifier: []byte("u"), Timestamp: 3, Value: Int64Cell(55)},           // a plain total: not state
		{Family: "d", Qualifier: CounterPartQualifier(3), Timestamp: 3, Value: []byte("x")}, // another family
	}}
	cc, err := ReadCounterCells(row, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.Parts) != 2 || cc.Base.TS != 5 || cc.Parts[1].TS != 9 {
		t.Fatalf("cells %+v", cc)
	}
	m := cc.Merged()
	if got := m.Total("c", []byte("u")); got != 103 {
		t.Errorf("total %d, want 100 + 7 - 4", got)
	}
	if m.Seq(1) != 50 || m.Seq(2) != 12 || m.Settled(1) != 30 || m.Settled(2) != 10 || m.Seq(3) != -1 {
		t.Errorf("sequences %+v", m.Seqs)
	}
	if p := cc.Part(7); p.Raw != nil || p.State == nil || len(p.State.Totals) != 0 {
		t.Errorf("a stream without a part: %+v", p)
	}
	if s, ok := CounterPartStream(CounterPartQualifier(0xdeadbeef)); !ok || s != 0xdeadbeef {
		t.Errorf("part qualifier round trip: %x %v", s, ok)
	}
	if _, ok := CounterPartStream(QualCounterState); ok || !IsCounterState(QualCounterState) || IsCounterState([]byte("u")) {
		t.Error("the base cell is not a part, and is a state cell; a total is neither")
	}
	row.Cells = append(row.Cells, store.Cell{Family: "c", Qualifier: CounterPartQualifier(4), Timestamp: 1, Value: []byte("junk")})
	if _, err := ReadCounterCells(row, "c"); err == nil {
		t.Error("a part cell that does not decode read without an error")
	}
}

// Whatever bytes a state cell holds, reading the row returns an error or
// cells that merge; never a panic.
func FuzzReadCounterCells(f *testing.F) {
	s := &CounterState{}
	s.Add("c", []byte("u"), 3)
	s.Advance(9, 4)
	f.Add(EncodeCounterState(s), true)
	f.Add([]byte{stateMagic, 1, 1}, false)
	f.Fuzz(func(t *testing.T, v []byte, part bool) {
		q := QualCounterState
		if part {
			q = CounterPartQualifier(9)
		}
		cc, err := ReadCounterCells(store.Row{Cells: []store.Cell{{Family: "c", Qualifier: q, Timestamp: 1, Value: v}}}, "c")
		if err != nil {
			return
		}
		_ = cc.Merged().Total("c", []byte("u"))
	})
}
