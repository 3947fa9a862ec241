package write

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// rowMuts gathers mutations per table and row, so that several refs of one
// entity in one row become one atomic row mutation. Rows are appended as
// they come and merged once, when sorted: cheaper than a map by row key
// (a string and an entry per row) for rows that mostly come once.
type rowMuts struct {
	byTable map[string][]store.RowMutation
}

func (r *rowMuts) add(table string, row []byte, ms ...store.Mutation) {
	if r.byTable == nil {
		r.byTable = map[string][]store.RowMutation{}
	}
	r.byTable[table] = append(r.byTable[table], store.RowMutation{Row: row, Mutations: ms})
}

// sorted returns a table's row mutations in key order (deterministic, and
// friendly to region-grouped batching), one per row: the mutations given
// for one row in the order they were added.
func (r *rowMuts) sorted(table string) []store.RowMutation {
	return r.sortedIn(table, &sortBuf{})
}

// sortBuf is the room sortedIn works and returns its rows in.
type sortBuf struct {
	idx  []rowPos
	rows []store.RowMutation
}

// rowPos is a row mutation's position, and its row's first eight bytes as
// a number.
type rowPos struct {
	head uint64
	i    int32
}

// sortedIn is sorted in sb's room: the rows it returns are valid until sb
// is used again.
func (r *rowMuts) sortedIn(table string, sb *sortBuf) []store.RowMutation {
	added := r.byTable[table]
	// Positions are sorted, not the row mutations themselves: fewer bytes
	// moved, and an unstable sort that keeps the order of adds through the
	// tie on position.
	// Each position carries its row's first eight bytes as a number, so
	// that most comparisons are one of integers; rows that share them are
	// compared whole.
	idx := slices.Grow(sb.idx[:0], len(added))[:len(added)]
	sb.idx = idx
	for i := range idx {
		idx[i] = rowPos{rowHead(added[i].Row), int32(i)}
	}
	slices.SortFunc(idx, func(a, b rowPos) int {
		if a.head != b.head {
			return cmp.Compare(a.head, b.head)
		}
		if c := bytes.Compare(added[a.i].Row, added[b.i].Row); c != 0 {
			return c
		}
		return int(a.i - b.i)
	})
	rows := slices.Grow(sb.rows[:0], len(added))[:len(added)]
	sb.rows = rows
	for i, p := range idx {
		rows[i] = added[p.i]
	}
	out := rows[:0]
	for i := 0; i < len(rows); {
		m := rows[i]
		j := i + 1
		if j < len(rows) && bytes.Equal(rows[j].Row, m.Row) {
			// Copied: the added slices belong to their callers.
			m.Mutations = slices.Clone(m.Mutations)
			for ; j < len(rows) && bytes.Equal(rows[j].Row, m.Row); j++ {
				m.Mutations = append(m.Mutations, rows[j].Mutations...)
			}
		}
		out = append(out, m)
		i = j
	}
	return out
}

// rowHead is a row key's first eight bytes as a big-endian number (padded
// with zeros): two rows order as their heads when the heads differ.
func rowHead(row []byte) uint64 {
	var b [8]byte
	copy(b[:], row)
	return binary.BigEndian.Uint64(b[:])
}

// merge appends o's row mutations to r's, table by table, after r's own.
func (r *rowMuts) merge(o *rowMuts) {
	for t, rows := range o.byTable {
		if r.byTable == nil {
			r.byTable = map[string][]store.RowMutation{}
		}
		r.byTable[t] = append(r.byTable[t], rows...)
	}
}

// tables lists the tables r holds rows of. A table emptied by reset keeps
// its list (and the list's room) but is not listed.
func (r *rowMuts) tables() []string {
	out := make([]string, 0, len(r.byTable))
	for t, rows := range r.byTable {
		if len(rows) > 0 {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// reset empties r for another Apply, keeping each table's list. The rows
// are cleared: a kept list must not hold on to the batch's keys and cells
// (and through them the derive buffers they were cut from).
func (r *rowMuts) reset() {
	for t, rows := range r.byTable {
		clear(rows)
		r.byTable[t] = rows[:0]
	}
}

// write turns entity plans into mutations and applies them: primary rows
// first, then derived rows, then fast counters.
func (w *Writer) write(ctx context.Context, plans []*entityPlan, firsts map[uint64]int64, stats *Stats) error {
	// The reference rows new live copies start from and the counter rows
	// the batch counts in are read before anything of it is written; the
	// two reads share nothing, and on HBase each is a round trip or more,
	// so they run at once.
	var live map[string]store.Row
	var bounded *boundedBatch
	err := both(ctx, func(ctx context.Context) error {
		var err error
		live, err = w.liveSources(ctx, plans)
		return err
	}, func(ctx context.Context) error {
		var err error
		bounded, err = w.planBounded(ctx, plans, firsts)
		return err
	})
	if err != nil {
		return err
	}
	sets, err := w.mutationSets(ctx, plans, live)
	if err != nil {
		return err
	}
	// The sets' lists and the merged ones are used again by later
	// Applies: by now every Batch they went to has returned.
	all := w.getMutSet()
	defer func() {
		w.putMutSet(all)
		for _, ms := range sets {
			w.putMutSet(ms)
		}
	}()
	for _, ms := range sets {
		all.merge(ms)
		stats.Add(ms.stats)
	}
	finish, locsBefore, prim, vacated, derived, locsAfter := &all.finish, &all.locsBefore, &all.prim, &all.vacated, &all.derived, &all.locsAfter
	// A move lists the new row in the locator, writes it, empties the old
	// one (recording the old row's copies as pending there), writes the
	// copies, and only then unlists the old row. A crash at any point
	// leaves both rows listed, so the replay finds them and redoes what is
	// missing; never a tombstone alone at the version, which would read as
	// a delete. The listing goes out before the row, not beside it: a batch
	// reads no primary row of an entity whose locator row is empty, so a
	// row written unlisted would be lost to a replay that folds later
	// events of the entity (TestRunAheadConverges finds such a crash).
	// Before all of it go the deletes of stored versions whose write may
	// not have finished (entityPlan.finish), which the new versions'
	// pending records no longer list.
	for _, rm := range []*rowMuts{finish, locsBefore, prim, vacated} {
		for _, t := range rm.tables() {
			if err := w.batchSorted(ctx, rm, t); err != nil {
				return err
			}
		}
	}
	// The primary rows are written: what remains is the derived rows and
	// the locator rows a move unlists, and the bounded counter rows, which
	// need only the primary rows' Counted records written before them
	// (docs/writer.md, "bounded counters", step 3). Neither side reads
	// what the other writes, so both run at once.
	err = both(ctx, func(ctx context.Context) error {
		// Derived tables are independent of each other: write them at
		// once, so that their log syncs can be grouped (Pebble commits
		// concurrent batches with one sync; HBase serves them in
		// parallel).
		if err := w.parallel(ctx, derived.tables(), func(ctx context.Context, t string) error {
			return w.batchSorted(ctx, derived, t)
		}); err != nil {
			return err
		}
		for _, t := range locsAfter.tables() {
			if err := w.batchSorted(ctx, locsAfter, t); err != nil {
				return err
			}
		}
		return nil
	}, func(ctx context.Context) error {
		return w.applyBounded(ctx, bounded, stats)
	})
	if err != nil {
		return err
	}
	// Everything was sent without a log sync where the store can sync its
	// one log at the end: one sync now makes the batch durable, in the
	// order written. A counter row reached the log after the primary rows
	// it counts (their Batch had returned when its put was sent), so a
	// crash, which loses only the log's tail, cannot keep the
	// counter row without them.
	if sy, ok := w.st.(store.Syncer); ok && w.deferSync() {
		if err := sy.Sync(ctx); err != nil {
			return fmt.Errorf("write: sync: %w", err)
		}
	}
	for _, in := range all.incs {
		err := w.fenced(ctx, func(ctx context.Context) error {
			_, err := w.st.Increment(ctx, in.Table, store.Increment{Row: in.Row, Columns: []store.IncrementColumn{{Family: in.Family, Qualifier: in.Qualifier, Delta: in.Delta}}})
			return err
		})
		if err != nil {
			return fmt.Errorf("write: increment %s row %s: %w", in.Table, store.Printable(in.Row), err)
		}
		stats.Increments++
	}
	return nil
}

// batchSorted writes a table's rows of rm in key order, sorted in room
// that earlier calls used: the rows are sent before it returns.
func (w *Writer) batchSorted(ctx context.Context, rm *rowMuts, table string) error {
	sb := w.sortBufs.get()
	if sb == nil {
		sb = &sortBuf{}
	}
	rows := rm.sortedIn(table, sb)
	err := w.batch(ctx, table, rows)
	clear(sb.rows) // the rows are sent: keep none of their keys and cells
	w.sortBufs.put(sb)
	return err
}

// mutSet is what the plans of one chunk come to: row mutations by the step
// that writes them, fast increments, and what they count.
type mutSet struct {
	finish, locsBefore, prim, vacated, derived, locsAfter rowMuts
	incs                                                  []layout.Increment
	stats                                                 Stats
	slab                                                  mutSlab
}

// steps lists ms's row mutations by step, in the order write sends them.
func (ms *mutSet) steps() [6]*rowMuts {
	return [...]*rowMuts{&ms.finish, &ms.locsBefore, &ms.prim, &ms.vacated, &ms.derived, &ms.locsAfter}
}

// merge appends o's row mutations, step by step, and increments to ms's.
func (ms *mutSet) merge(o *mutSet) {
	mine, theirs := ms.steps(), o.steps()
	for i := range mine {
		mine[i].merge(theirs[i])
	}
	ms.incs = append(ms.incs, o.incs...)
}

// reset empties ms for another Apply, keeping the room of its lists.
func (ms *mutSet) reset() {
	for _, r := range ms.steps() {
		r.reset()
	}
	clear(ms.incs)
	ms.incs = ms.incs[:0]
	cells, deletes := ms.stats.Cells, ms.stats.Deletes
	clear(cells)
	clear(deletes)
	ms.stats = Stats{Cells: cells, Deletes: deletes}
	ms.slab.reset()
}

// getMutSet returns an empty set: one an earlier Apply used, or a new one.
func (w *Writer) getMutSet() *mutSet {
	if ms := w.mutSets.get(); ms != nil {
		return ms
	}
	return &mutSet{stats: Stats{Cells: map[string]int{}, Deletes: map[string]int{}}}
}

// putMutSet keeps ms, emptied, for a later Apply. The caller holds no list
// of it any more, and no store call it made is running: a Batch has copied
// or sent the mutations before it returns.
func (w *Writer) putMutSet(ms *mutSet) {
	if ms == nil {
		return
	}
	ms.reset()
	w.mutSets.put(ms)
}

// mutSlab hands out mutation lists cut from shared chunks: a plan writes a
// list per row, and allocating each on its own was most of the writer's
// allocations after deriving. Each list is capped at the room it asked
// for, so that appending past it reallocates instead of writing into the
// next list. The chunks are cut again after a reset.
type mutSlab struct {
	buf    []store.Mutation   // the chunk being cut
	chunks [][]store.Mutation // every chunk made; those before next are in use
	next   int
}

// muts returns an empty list with room for n mutations.
func (s *mutSlab) muts(n int) []store.Mutation {
	if cap(s.buf)-len(s.buf) < n {
		if s.next < len(s.chunks) && cap(s.chunks[s.next]) >= n {
			s.buf = s.chunks[s.next][:0]
		} else {
			s.buf = make([]store.Mutation, 0, max(n, 512))
			if s.next < len(s.chunks) {
				s.chunks[s.next] = s.buf
			} else {
				s.chunks = append(s.chunks, s.buf)
			}
		}
		s.next++
	}
	start := len(s.buf)
	s.buf = s.buf[:start+n]
	return s.buf[start : start : start+n]
}

// reset makes every chunk free to cut again, cleared of the cells its
// lists pointed at.
func (s *mutSlab) reset() {
	for _, c := range s.chunks[:s.next] {
		clear(c[:cap(c)])
	}
	s.buf, s.next = nil, 0
}

// planChunk is how many entity plans one goroutine turns into mutations
// at a time: enough that merging the chunks' sets costs little next to
// building them.
const planChunk = 64

// mutationSets builds the mutations of every plan, chunks of planChunk
// plans on the writer's goroutines at once (each plan needs nothing but
// itself and the reference rows read). Sets are returned in plan order, so
// that merged in turn they add rows in the order one loop would have.
func (w *Writer) mutationSets(ctx context.Context, plans []*entityPlan, live map[string]store.Row) ([]*mutSet, error) {
	sets := make([]*mutSet, (len(plans)+planChunk-1)/planChunk)
	err := w.each(ctx, len(sets), func(_ context.Context, c int) error {
		ms := w.getMutSet()
		for _, ep := range plans[c*planChunk : min(len(plans), (c+1)*planChunk)] {
			w.planMutations(ms, ep, live)
		}
		sets[c] = ms
		return nil
	})
	return sets, err
}

// planMutations adds one entity plan's mutations to ms.
func (w *Writer) planMutations(ms *mutSet, ep *entityPlan, live map[string]store.Row) {
	v := ep.version
	for _, r := range ep.finish {
		ms.finish.add(r.Table, r.Row, w.deleteRef(r, ep.finishAt-1, &ms.stats)...)
	}
	if ep.writePrimary {
		w.primaryMutations(&ms.prim, &ms.slab, ep, &ms.stats)
	}
	for _, x := range ep.vacate {
		w.vacate(&ms.vacated, ep, x, &ms.stats)
	}
	if cw := ep.counted; cw != nil {
		if len(ep.vacate) > 0 && bytes.Equal(cw.row, ep.vacate[0].key) {
			ms.vacated.add(ep.g.prim.Name, cw.row, w.countedMutations(ep)...)
		} else {
			ms.prim.add(ep.g.prim.Name, cw.row, w.countedMutations(ep)...)
		}
	}
	if lm := w.liveMutations(ep, live, &ms.stats); len(lm) > 0 {
		ms.prim.add(ep.g.prim.Name, ep.key, lm...)
	}
	if before, after := w.locatorMutations(ep, &ms.stats); len(before)+len(after) > 0 {
		if len(before) > 0 {
			ms.locsBefore.add(ep.g.loc.table.Name, ep.g.loc.row, before...)
		}
		if len(after) > 0 {
			ms.locsAfter.add(ep.g.loc.table.Name, ep.g.loc.row, after...)
		}
	}
	// Derive returns items sorted by ref, so the stored state's items
	// are found by walking both lists together.
	var stored []layout.Item
	if ep.stored != nil && !ep.redo {
		stored = ep.stored.Items
	}
	if ep.derived != nil {
		// stored, the items and old are all sorted by ref: one walk.
		j, k := 0, 0
		for _, it := range ep.derived.Items {
			for j < len(stored) && stored[j].Compare(it.Ref) < 0 {
				j++
			}
			var prev *layout.Item
			if j < len(stored) && stored[j].Compare(it.Ref) == 0 {
				prev = &stored[j]
			}
			for k < len(ep.old) && ep.old[k].Compare(it.Ref) < 0 {
				k++
			}
			if prev != nil && sameCells(prev.Cells, it.Cells) && !w.expiring[it.Table] {
				continue // already in the store, as it should be
			}
			was := k < len(ep.old) && ep.old[k].Compare(it.Ref) == 0
			rm := ms.slab.muts(len(it.Cells))
			if was && it.Family == "" && (prev == nil || !coveredBy(prev.Cells, it.Cells)) {
				// The row existed for an older state and held a column
				// the new state does not write: clear it.
				rm = append(rm, w.clearRow(it.Table, v-1, &ms.stats)...)
			}
			for _, c := range it.Cells {
				rm = append(rm, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: v, Value: c.Value})
			}
			ms.stats.Cells[it.Table] += len(it.Cells)
			ms.derived.add(it.Table, it.Row, rm...)
		}
		if ep.first && ep.writePrimary {
			for _, in := range ep.derived.Increments {
				if !in.Bounded {
					ms.incs = append(ms.incs, in)
				}
			}
		}
	}
	var items []layout.Item
	if ep.derived != nil {
		items = ep.derived.Items
	}
	j := 0
	for _, r := range ep.old {
		for j < len(items) && items[j].Compare(r) < 0 {
			j++
		}
		if j < len(items) && items[j].Compare(r) == 0 {
			continue // derived again: written above
		}
		ms.derived.add(r.Table, r.Row, w.deleteRef(r, v-1, &ms.stats)...)
	}
}

func (w *Writer) primaryMutations(prim *rowMuts, slab *mutSlab, ep *entityPlan, stats *Stats) {
	t := ep.g.prim
	v := ep.version
	key := ep.key
	if key == nil {
		return // a delete of an entity no row holds: the locator records it
	}
	n := 2
	if ep.inRow != nil {
		n += len(ep.inRow.Primary)
	}
	if ep.derived != nil {
		n += len(ep.derived.Primary)
	}
	ms := slab.muts(n)
	// Delete, below the new version, each column the row's stored state
	// wrote and this one does not. Columns rather than families: live
	// copies in the row carry other entities' versions and must stay. A
	// stale pending or tombstone cell may stay visible below the new
	// version; readers only trust the ones at the row's version.
	if inRow := ep.inRow; inRow != nil {
		var keep []layout.Cell
		if !ep.deleted {
			keep = ep.derived.Primary
		}
		// Both lists are in column order (layout.Derive sorts a primary
		// row's cells): one walk finds the columns keep lacks.
		j := 0
		for _, c := range inRow.Primary {
			for j < len(keep) && layout.CompareColumns(keep[j], c) < 0 {
				j++
			}
			if j < len(keep) && layout.CompareColumns(keep[j], c) == 0 {
				continue
			}
			ms = append(ms, store.Mutation{Kind: store.DeleteColumn, Family: c.Family, Qualifier: c.Qualifier, Timestamp: v - 1})
			stats.Deletes[t.Name]++
		}
	}
	book := layout.BookFamily(t)
	if ep.deleted {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: layout.QualTombstone, Timestamp: v})
		stats.Cells[t.Name]++
	} else {
		for _, c := range ep.derived.Primary {
			ms = append(ms, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: v, Value: c.Value})
		}
		stats.Cells[t.Name] += len(ep.derived.Primary)
	}
	// The pending record goes out with every version the writer knows
	// the position of, refs or none: a later batch tells by it whether
	// this write may not have finished (fold).
	if len(ep.old) > 0 || ep.placed {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: layout.QualPending, Timestamp: v, Value: layout.EncodePending(ep.old, ep.fromPtr())})
		stats.Cells[t.Name]++
	}
	prim.add(t.Name, key, ms...)
}

// vacate empties a primary row the entity no longer lives in: its columns
// are deleted below the version and a tombstone at it tells readers, and a
// late older event, that the entity is gone from there. Live copies stay,
// as in any deleted row.
func (w *Writer) vacate(prim *rowMuts, ep *entityPlan, x located, stats *Stats) {
	t := ep.g.prim
	v := ep.version
	var ms []store.Mutation
	book := layout.BookFamily(t)
	var refs []layout.Ref
	if d := x.derived; d != nil {
		for _, c := range d.Primary {
			ms = append(ms, store.Mutation{Kind: store.DeleteColumn, Family: c.Family, Qualifier: c.Qualifier, Timestamp: v - 1})
		}
		stats.Deletes[t.Name] += len(ms)
		// The row's own copies are to be deleted too: recorded here, at
		// the version, so that a replay after a crash redoes the deletes
		// even once the row no longer reads as a live state.
		refs = d.Refs()
	}
	if len(refs) > 0 || ep.placed {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: layout.QualPending, Timestamp: v, Value: layout.EncodePending(refs, ep.fromPtr())})
		stats.Cells[t.Name]++
	}
	ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: layout.QualTombstone, Timestamp: v})
	stats.Cells[t.Name]++
	prim.add(t.Name, x.key, ms...)
}

// deleteRef deletes what a ref names at or below ts: its row, or its cell.
func (w *Writer) deleteRef(r layout.Ref, ts int64, stats *Stats) []store.Mutation {
	if r.Family == "" {
		return w.clearRow(r.Table, ts, stats)
	}
	stats.Deletes[r.Table]++
	return []store.Mutation{{Kind: store.DeleteColumn, Family: r.Family, Qualifier: r.Qualifier, Timestamp: ts}}
}

// clearRow deletes every family of a table's row at or below ts.
func (w *Writer) clearRow(table string, ts int64, stats *Stats) []store.Mutation {
	t := w.plan.Table(table)
	fams := familiesOf(t)
	ms := make([]store.Mutation, len(fams))
	for i, f := range fams {
		ms[i] = store.Mutation{Kind: store.DeleteFamily, Family: f, Timestamp: ts}
	}
	stats.Deletes[table] += len(fams)
	return ms
}

// sameCells reports whether two sorted cell lists are equal.
func sameCells(a, b []layout.Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Family != b[i].Family || !bytes.Equal(a[i].Qualifier, b[i].Qualifier) || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// coveredBy reports whether every column of old is written again in new.
func coveredBy(old, new []layout.Cell) bool {
	for _, o := range old {
		found := false
		for _, n := range new {
			if n.Family == o.Family && bytes.Equal(n.Qualifier, o.Qualifier) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
