package storetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
)

var modelTests = []testCase{
	{"RandomAgainstModel", testRandomModel},
}

// The randomized test's small world: few rows, columns and timestamps, so
// that puts and deletes collide often.
var (
	randRows       = []string{"\x00", "a", "a\x00", "b", "\xff"}
	randQualifiers = []string{"", "x", "y\x00"}
	randFamilies   = []store.FamilySpec{{Name: "a", MaxVersions: 2}, {Name: "b", MaxVersions: 3}, {Name: "c"}}
)

const (
	randMaxTS      = 12
	randSteps      = 120 // mutations per phase
	randCheckEvery = 30
)

type randTest struct {
	t       *testing.T
	e       *env
	rng     *rand.Rand
	table   string
	model   *model
	history map[string][]string // per row, what was applied, for failure reports
	step    int
	refused int // generated mutations dropped as flush-dependent
	// Reads where the answers before and after a flush differ, by which
	// one the backend gave.
	asUnflushed, asFlushed int
}

// tally counts which of two differing answers a read matched.
func (rt *randTest) tally(matchedWant, matchedFlushed bool) {
	if matchedWant != matchedFlushed {
		if matchedWant {
			rt.asUnflushed++
		} else {
			rt.asFlushed++
		}
	}
}

func testRandomModel(t *testing.T, e *env) {
	seed := e.h.Seed
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("randomized with seed %d; replay with DENORM_STORETEST_SEED=%d", seed, seed)
		}
	})
	spec := store.TableSpec{Families: randFamilies}
	rt := &randTest{
		t: t, e: e,
		rng:     rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
		table:   e.create(spec),
		model:   newModel(spec),
		history: map[string][]string{},
	}
	for phase := range 3 {
		for i := range randSteps {
			rt.mutateOnce()
			if (i+1)%randCheckEvery == 0 {
				rt.verify(fmt.Sprintf("phase %d step %d", phase, rt.step))
				if t.Failed() {
					return
				}
			}
		}
		rt.verify(fmt.Sprintf("end of phase %d", phase))
		if t.Failed() {
			return
		}
		if phase == 2 {
			t.Logf("%d row mutations applied, %d generated ones left out as flush-dependent", rt.step, rt.refused)
			t.Logf("reads whose answer depends on flushes: %d answered as before a flush, %d as after", rt.asUnflushed, rt.asFlushed)
		} else if e.tryCompact(rt.table) {
			rt.model.majorCompact(nowMillis())
			for r := range rt.history {
				rt.history[r] = append(rt.history[r], "major compaction")
			}
			rt.verify(fmt.Sprintf("after major compaction %d", phase+1))
			if t.Failed() {
				return
			}
		}
	}
}

func (rt *randTest) pick(list []string) string { return list[rt.rng.IntN(len(list))] }

// genMutation makes one row mutation without repeated put coordinates (the
// order of two puts of one cell inside one HBase mutation is not a contract).
func (rt *randTest) genMutation() store.RowMutation {
	rm := store.RowMutation{Row: []byte(rt.pick(randRows))}
	seen := map[string]bool{}
	for range 1 + rt.rng.IntN(3) {
		f := randFamilies[rt.rng.IntN(len(randFamilies))].Name
		q := rt.pick(randQualifiers)
		ts := int64(1 + rt.rng.IntN(randMaxTS))
		var m store.Mutation
		switch p := rt.rng.IntN(100); {
		case p < 55:
			key := fmt.Sprintf("%s/%s/%d", f, q, ts)
			if seen[key] {
				continue
			}
			seen[key] = true
			m = store.Mutation{Kind: store.Put, Family: f, Qualifier: []byte(q), Timestamp: ts,
				Value: []byte(fmt.Sprintf("s%d", rt.step))}
		case p < 68:
			m = store.Mutation{Kind: store.DeleteVersion, Family: f, Qualifier: []byte(q), Timestamp: ts}
		case p < 81:
			m = store.Mutation{Kind: store.DeleteColumn, Family: f, Qualifier: []byte(q), Timestamp: ts}
		case p < 93:
			m = store.Mutation{Kind: store.DeleteFamily, Family: f, Timestamp: ts}
			if rt.rng.IntN(2) == 0 {
				m.Qualifier = []byte(q) // ignored by a family delete
			}
		default:
			m = store.Mutation{Kind: store.DeleteRow, Timestamp: ts}
			if rt.rng.IntN(2) == 0 {
				m.Family, m.Qualifier = f, []byte(q) // ignored by a row delete
			}
		}
		rm.Mutations = append(rm.Mutations, m)
	}
	return rm
}

func describeMutation(rm store.RowMutation) string {
	var parts []string
	for _, m := range rm.Mutations {
		switch m.Kind {
		case store.Put:
			parts = append(parts, fmt.Sprintf("put %s:%s@%d=%s", m.Family, store.Printable(m.Qualifier), m.Timestamp, m.Value))
		case store.DeleteVersion, store.DeleteColumn:
			parts = append(parts, fmt.Sprintf("%s %s:%s@%d", m.Kind, m.Family, store.Printable(m.Qualifier), m.Timestamp))
		case store.DeleteFamily:
			parts = append(parts, fmt.Sprintf("%s %s@%d", m.Kind, m.Family, m.Timestamp))
		default:
			parts = append(parts, fmt.Sprintf("%s @%d", m.Kind, m.Timestamp))
		}
	}
	return strings.Join(parts, "; ")
}

// mutateOnce applies one generated row mutation, or a small batch of them
// on distinct rows, to the store and the model.
func (rt *randTest) mutateOnce() {
	t := rt.t
	n := 1
	if rt.rng.IntN(4) == 0 {
		n = 2 + rt.rng.IntN(2)
	}
	var ms []store.RowMutation
	used := map[string]bool{}
	for len(ms) < n {
		var rm store.RowMutation
		ok := false
		for range 20 {
			rm = rt.genMutation()
			if len(rm.Mutations) == 0 || used[string(rm.Row)] {
				continue
			}
			if rt.model.ambiguous(rm) {
				rt.refused++
				continue
			}
			ok = true
			break
		}
		if !ok {
			break
		}
		used[string(rm.Row)] = true
		if err := rt.model.apply(rm); err != nil {
			t.Fatalf("model refused a generated mutation: %v", err)
		}
		rt.step++
		rt.history[string(rm.Row)] = append(rt.history[string(rm.Row)], fmt.Sprintf("step %d: %s", rt.step, describeMutation(rm)))
		ms = append(ms, rm)
	}
	switch len(ms) {
	case 0:
		return
	case 1:
		rt.e.mutate(rt.table, ms[0])
	default:
		errs, err := rt.e.st.Batch(rt.e.ctx, rt.table, ms)
		if err != nil {
			t.Fatalf("Batch: %v", err)
		}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Batch row %s: %v", store.Printable(ms[i].Row), err)
			}
		}
	}
}

// randColumns picks a column selection: everything, or some families, each
// whole or narrowed to one or two columns, never both for one family.
func (rt *randTest) randColumns() []store.Column {
	if rt.rng.IntN(3) == 0 {
		return nil
	}
	var cols []store.Column
	for _, f := range randFamilies {
		switch rt.rng.IntN(3) {
		case 0:
		case 1:
			cols = append(cols, store.Column{Family: f.Name})
		case 2:
			q1 := rt.pick(randQualifiers)
			cols = append(cols, store.Column{Family: f.Name, Qualifier: []byte(q1)})
			if q2 := rt.pick(randQualifiers); q2 != q1 && rt.rng.IntN(2) == 0 {
				cols = append(cols, store.Column{Family: f.Name, Qualifier: []byte(q2)})
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	return cols
}

func (rt *randTest) randTimeRange() store.TimeRange {
	switch rt.rng.IntN(3) {
	case 0:
		return store.TimeRange{}
	case 1:
		return store.TimeRange{Min: int64(rt.rng.IntN(randMaxTS + 1))}
	}
	lo := int64(rt.rng.IntN(randMaxTS))
	return store.TimeRange{Min: lo, Max: lo + 1 + int64(rt.rng.IntN(randMaxTS))}
}

func (rt *randTest) fail(where, what string, got, want []store.Cell, row string) {
	rt.t.Errorf("%s: %s of row %s\n got  %s\n want %s\n history of the row:\n  %s", where, what, store.Printable([]byte(row)),
		cellsString(got), cellsString(want), strings.Join(rt.history[row], "\n  "))
}

// verify compares store and model over every row with several reads.
func (rt *randTest) verify(where string) {
	e := rt.e
	for _, row := range randRows {
		for _, versions := range []int{1, 5} {
			g := store.Get{Row: []byte(row), MaxVersions: versions}
			got := e.get(rt.table, g).Cells
			if want := rt.model.read(g.Row, nil, versions, store.TimeRange{}, 0); !sameCells(got, want) {
				rt.fail(where, fmt.Sprintf("Get versions=%d", versions), got, want, row)
			}
		}
		g := store.Get{Row: []byte(row), Columns: rt.randColumns(), MaxVersions: 1 + rt.rng.IntN(4), TimeRange: rt.randTimeRange()}
		got := e.get(rt.table, g).Cells
		want := rt.model.read(g.Row, g.Columns, g.MaxVersions, g.TimeRange, 0)
		flushed := rt.model.readFlushed(g.Row, g.Columns, g.MaxVersions, g.TimeRange, 0)
		rt.tally(sameCells(got, want), sameCells(got, flushed))
		if !sameCells(got, want) && !sameCells(got, flushed) {
			rt.fail(where, fmt.Sprintf("Get columns=%s versions=%d time=[%d,%d)", columnsString(g.Columns), g.MaxVersions,
				g.TimeRange.Min, g.TimeRange.Max), got, want, row)
			if !sameCells(want, flushed) {
				rt.t.Logf("  (or, as after a flush: %s)", cellsString(flushed))
			}
		}
	}
	// Scans: the whole table both ways, then a random range and selection.
	for _, s := range []store.Scan{
		{MaxVersions: 5},
		{MaxVersions: 5, Reverse: true},
		rt.randScan(),
	} {
		rows := joinPieces(rt.t, e.scan(rt.table, s), s.Batch)
		want, flushed := rt.modelScan(s, rt.model.read), rt.modelScan(s, rt.model.readFlushed)
		rt.tally(sameRows(rows, want), sameRows(rows, flushed))
		if sameRows(rows, want) || sameRows(rows, flushed) {
			continue
		}
		if len(rows) != len(want) {
			rt.t.Errorf("%s: scan %s: rows %q, want %q", where, describeScan(s), keysOf(rows), keysOf(want))
			continue
		}
		for i := range rows {
			if !bytes.Equal(rows[i].Key, want[i].Key) || !sameCells(rows[i].Cells, want[i].Cells) {
				rt.fail(where, "scan "+describeScan(s), rows[i].Cells, want[i].Cells, string(want[i].Key))
			}
		}
	}
}

func (rt *randTest) randScan() store.Scan {
	s := store.Scan{Columns: rt.randColumns(), MaxVersions: 1 + rt.rng.IntN(4), TimeRange: rt.randTimeRange(), Reverse: rt.rng.IntN(2) == 0}
	lo, hi := rt.pick(randRows), rt.pick(randRows)
	if bytes.Compare([]byte(lo), []byte(hi)) > 0 {
		lo, hi = hi, lo
	}
	if s.Reverse {
		lo, hi = hi, lo // Start is the upper row
	}
	if rt.rng.IntN(3) > 0 {
		s.Start = []byte(lo)
	}
	if rt.rng.IntN(3) > 0 && lo != hi {
		s.Stop = []byte(hi)
	}
	if rt.rng.IntN(3) == 0 {
		s.Limit = 1 + rt.rng.IntN(3)
	}
	if rt.rng.IntN(3) == 0 {
		s.Batch = 1 + rt.rng.IntN(4)
	}
	return s
}

func sameRows(a, b []store.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !sameCells(a[i].Cells, b[i].Cells) {
			return false
		}
	}
	return true
}

type readFunc func(row []byte, cols []store.Column, maxVersions int, tr store.TimeRange, nowMs int64) []store.Cell

// modelScan is what a scan returns according to the model (without Batch).
func (rt *randTest) modelScan(s store.Scan, read readFunc) []store.Row {
	keys := rt.model.rowKeys()
	if s.Reverse {
		for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
			keys[i], keys[j] = keys[j], keys[i]
		}
	}
	var out []store.Row
	for _, k := range keys {
		if !inScan(s, k) {
			continue
		}
		cs := read(k, s.Columns, s.MaxVersions, s.TimeRange, 0)
		if len(cs) == 0 {
			continue
		}
		out = append(out, store.Row{Key: k, Cells: cs})
		if s.Limit > 0 && len(out) == s.Limit {
			break
		}
	}
	return out
}

// inScan reports whether a row key falls in a scan's range, reverse scans
// included.
func inScan(s store.Scan, k []byte) bool {
	if !s.Reverse {
		return (len(s.Start) == 0 || bytes.Compare(k, s.Start) >= 0) && (len(s.Stop) == 0 || bytes.Compare(k, s.Stop) < 0)
	}
	return (len(s.Start) == 0 || bytes.Compare(k, s.Start) <= 0) && (len(s.Stop) == 0 || bytes.Compare(k, s.Stop) > 0)
}

// joinPieces glues the consecutive pieces of batched rows back together,
// checking that no piece is empty or over the batch.
func joinPieces(t *testing.T, rows []store.Row, batch int) []store.Row {
	t.Helper()
	var out []store.Row
	for _, r := range rows {
		if len(r.Cells) == 0 || (batch > 0 && len(r.Cells) > batch) {
			t.Errorf("scan with batch %d returned a piece of %d cells for row %s", batch, len(r.Cells), store.Printable(r.Key))
		}
		if n := len(out); n > 0 && bytes.Equal(out[n-1].Key, r.Key) {
			out[n-1].Cells = append(out[n-1].Cells, r.Cells...)
			continue
		}
		out = append(out, r)
	}
	return out
}
