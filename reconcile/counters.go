package reconcile

import (
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// How each counter mode enters a range's checksum, one function per mode
// and side. The expected side adds what the primary pass derives; the
// stored side what a scan of the counter table finds. A range is equal when
// both sides agree.

// expectExact adds an exact-mode contribution the primary pass derives:
// like an index cell, it is a value of its own, so it is hashed with it.
func expectExact(a *Acc, h *hasher, it layout.Item) {
	for _, c := range it.Cells {
		a.Sum.Add(h.cell(it.Row, c.Family, c.Qualifier, c.Value, true))
		a.Cells++
	}
	a.Copies++
}

// storedExact adds a stored cell of an exact-mode counter table: a
// contribution, or a bare total under an add column, which nothing derives
// (bareTotal), so that a range holding one is diffed. Other cells are left
// out, as the job leaves them alone.
func storedExact(a *Acc, h *hasher, t *schema.Table, row []byte, c store.Cell) {
	if _, ok := contributionKey(c.Qualifier); !ok && !bareTotal(t, c) {
		return
	}
	a.Sum.Add(h.cell(row, c.Family, c.Qualifier, c.Value, true))
	a.Cells++
	a.Copies++
}

// bareTotal reports whether a cell of an exact-mode counter table is a
// total under one of its add columns, the cell mode fast keeps. The writer
// never writes one in mode exact: it is what a counter moved from mode fast
// left behind, and a reader summing it with the contributions would count
// every entity twice. The job deletes it as an orphan, and readers ignore
// it.
func bareTotal(t *schema.Table, c store.Cell) bool {
	for _, a := range t.Counter.Adds {
		if c.Family == a.Family && string(c.Qualifier) == a.Qualifier {
			return true
		}
	}
	return false
}

// expectFast adds one entity's increment of a fast-mode total: delta x
// hash(cell), so that the increments of every entity sum to total x
// hash(cell), whatever part derived them.
func expectFast(a *Acc, h *hasher, in layout.Increment) {
	a.Sum.addTimes(h.cell(in.Row, in.Family, in.Qualifier, nil, false), in.Delta)
	a.Cells++
}

// storedFast adds a stored fast-mode total: total x hash(cell). A cell
// whose value is not a counter adds the hash of its bytes instead, which no
// sum of increments matches, so its range is diffed and the cell set.
func storedFast(a *Acc, h *hasher, row []byte, c store.Cell) {
	if layout.IsBookkeeping(c.Qualifier) {
		return
	}
	n, err := layout.CellInt64(c.Value)
	if err != nil {
		a.Sum.Add(h.cell(row, c.Family, c.Qualifier, c.Value, true))
	} else {
		a.Sum.addTimes(h.cell(row, c.Family, c.Qualifier, nil, false), n)
	}
	a.Cells++
	a.Copies++
}

// storedBounded adds a stored bounded counter row as storedFast adds total
// cells: each add column's total, merged from the row's state cells, times
// the hash of its cell. Any other cell (a plain total cell of a row written
// before part cells) and state cells that do not decode add the hash of
// their bytes, which no sum of increments matches: the range is diffed.
func storedBounded(a *Acc, h *hasher, t *schema.Table, row store.Row) {
	fam := layout.CounterStateFamily(t)
	cc, err := layout.ReadCounterCells(row, fam)
	for _, c := range row.Cells {
		if err != nil || !(c.Family == fam && layout.IsCounterState(c.Qualifier)) {
			a.Sum.Add(h.cell(row.Key, c.Family, c.Qualifier, c.Value, true))
		}
	}
	if err != nil {
		return
	}
	st := cc.Merged()
	for _, add := range t.Counter.Adds {
		q := []byte(add.Qualifier)
		a.Sum.addTimes(h.cell(row.Key, add.Family, q, nil, false), st.Total(add.Family, q))
		a.Cells++
	}
	a.Copies++
}
