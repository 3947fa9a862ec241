package write

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// Bounded counters (mode: bounded). A counter row holds one total per add
// column and one sequence per log stream, all in one state cell; an
// entity's primary row holds a Counted record: per counter cell, Base (what
// the total holds of the entity while the row's sequence for the record's
// stream is below the record's offset) and Now (what it holds from then
// on). The invariant, for every row R and add column:
//
//	total(R) = Σ over entities X of Included(record(X), seq_R(stream(X)))
//
// A batch keeps it in three steps: read the counter rows its entities count
// in; write each entity's new record with its primary row (Base = what R
// holds of it now, Now = its new counts, offset = its winning event's); then
// one check-and-mutate per row adds Σ (Now - Base) and raises the row's
// sequence for each stream to the batch's last offset. docs/writer.md
// proves that replays, reordering, duplicates and a crash between any two
// writes keep the invariant, and that a batch that completes leaves every
// entity it touched with Included = Now.

// boundedRow is one counter row a batch counts in.
type boundedRow struct {
	table string
	row   []byte
	// What the row held when read: the state cell's value (nil: none),
	// decoded, and its timestamp.
	raw   []byte
	state *layout.CounterState
	ts    int64
	// What the batch does to it.
	deltas  map[string]int64 // family \x00 qualifier -> delta
	streams map[uint64]int64 // stream -> offset to raise its sequence to
	settled map[uint64]int64 // stream -> where the batch began
}

// boundedBatch is the bounded-counter work of one batch.
type boundedBatch struct {
	rows map[string]*boundedRow // table \x00 row
	keys []string
}

// countedWrite is an entity's new Counted record and the row it goes to.
type countedWrite struct {
	row    []byte
	record []byte
	tomb   bool // the row holds no live state: a tombstone goes with it
}

func boundedKey(table string, row []byte) string { return table + "\x00" + string(row) }

// hasBounded reports whether an entity counts in a bounded counter.
func (w *Writer) hasBounded(entity string) bool { return w.bounded[entity] }

// winner is the event whose state the plan writes or redoes: the first, in
// log order, at the plan's version.
func winner(ep *entityPlan) *pending {
	for _, p := range ep.g.events {
		if p.ev.Version == ep.version {
			return p
		}
	}
	return nil
}

// newestCounted is the entity's newest Counted record among the rows read,
// and the row holding it.
func newestCounted(g *group) (*layout.Counted, []byte) {
	var c *layout.Counted
	var at int64
	var row []byte
	for _, f := range g.found {
		if f.state.Counted != nil && (c == nil || f.state.CountedAt > at) {
			c, at, row = f.state.Counted, f.state.CountedAt, f.key
		}
	}
	return c, row
}

// boundedCounts are the bounded-counter counts of the plan's final state.
func boundedCounts(ep *entityPlan) []layout.Increment {
	if ep.deleted || ep.derived == nil {
		return nil
	}
	var out []layout.Increment
	for _, in := range ep.derived.Increments {
		if in.Bounded {
			out = append(out, in)
		}
	}
	return out
}

// planBounded reads the counter rows the batch's entities count in and
// works out each row's delta and each entity's new record (kept in
// ep.counted). It runs before anything of the batch is written.
func (w *Writer) planBounded(ctx context.Context, plans []*entityPlan) (*boundedBatch, error) {
	bb := &boundedBatch{rows: map[string]*boundedRow{}}
	maxOff, minOff := map[uint64]int64{}, map[uint64]int64{}
	var eps []*entityPlan
	for _, ep := range plans {
		if !w.hasBounded(ep.g.ent.Name) {
			continue
		}
		win := winner(ep)
		if win == nil || win.stream == "" {
			return nil, fmt.Errorf("write: %s %s: no position for the event a bounded counter counts", ep.g.ent.Name, store.Printable(ep.g.events[0].groupKey))
		}
		eps = append(eps, ep)
		for _, p := range ep.g.events {
			if p.stream == "" {
				continue
			}
			id := layout.StreamID(p.stream)
			if o, ok := maxOff[id]; !ok || p.offset > o {
				maxOff[id] = p.offset
			}
			if o, ok := minOff[id]; !ok || p.offset < o {
				minOff[id] = p.offset
			}
		}
		old, _ := newestCounted(ep.g)
		add := func(table string, row []byte) {
			k := boundedKey(table, row)
			if bb.rows[k] == nil {
				bb.rows[k] = &boundedRow{table: table, row: row, deltas: map[string]int64{}, streams: map[uint64]int64{}, settled: map[uint64]int64{}}
				bb.keys = append(bb.keys, k)
			}
		}
		if old != nil {
			for _, c := range old.Counts {
				add(c.Table, c.Row)
			}
		}
		for _, in := range boundedCounts(ep) {
			add(in.Table, in.Row)
		}
	}
	if len(eps) == 0 {
		return bb, nil
	}
	slices.Sort(bb.keys)
	if err := w.readBoundedRows(ctx, bb); err != nil {
		return nil, err
	}
	for _, ep := range eps {
		win := winner(ep)
		s := layout.StreamID(win.stream)
		old, oldRow := newestCounted(ep.g)
		now := map[string]layout.Increment{}
		var refs []layout.Ref
		for _, in := range boundedCounts(ep) {
			r := layout.Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}
			now[r.ID()] = in
			refs = append(refs, r)
		}
		if old != nil {
			for _, c := range old.Counts {
				if _, ok := now[c.ID()]; !ok {
					refs = append(refs, c.Ref)
				}
			}
		}
		slices.SortFunc(refs, func(a, b layout.Ref) int { return a.Compare(b) })
		rec := &layout.Counted{Stream: s, Offset: win.offset}
		for _, r := range refs {
			br := bb.rows[boundedKey(r.Table, r.Row)]
			var inc int64
			if old != nil {
				inc = old.Included(r, br.state.Seq(old.Stream))
			}
			n := now[r.ID()].Delta
			if inc != 0 || n != 0 {
				rec.Counts = append(rec.Counts, layout.Count{Ref: r, Base: inc, Now: n})
			}
			if d := n - inc; d != 0 {
				br.deltas[r.Family+"\x00"+string(r.Qualifier)] += d
			}
			// Raised even when the delta is zero: from the batch on, the
			// row's sequence is at or past the offset of every record it
			// holds the Now of (docs/writer.md, "bounded counters").
			br.streams[s] = maxOff[s]
			// Everything of the stream before this batch is counted: the
			// batches before it completed (or it replays from the
			// committed position, which only moves past completed ones).
			br.settled[s] = minOff[s]
		}
		if old == nil && len(rec.Counts) == 0 {
			continue // counts nothing, and never did
		}
		if !ep.writePrimary && old != nil && old.Stream == s && sameNow(old, rec) {
			continue // a redo of the record the row holds: nothing to rewrite
		}
		cw := &countedWrite{record: layout.EncodeCounted(rec)}
		switch {
		case ep.writePrimary && ep.key != nil:
			cw.row = ep.key
		case !ep.writePrimary && ep.g.at != nil:
			cw.row = ep.g.at // beside (or over) the record the row holds
		case len(ep.vacate) > 0:
			cw.row = ep.vacate[0].key // a delete no row holds: a row it empties
		case oldRow != nil && ep.deleted:
			cw.row, cw.tomb = oldRow, true
		default:
			return nil, fmt.Errorf("write: %s %s: no primary row to record its bounded counts in", ep.g.ent.Name, store.Printable(ep.g.events[0].groupKey))
		}
		ep.counted = cw
	}
	return bb, nil
}

// sameNow reports whether two records hold the same Now counts.
func sameNow(a, b *layout.Counted) bool {
	an, bn := a.NowValues(), b.NowValues()
	if len(an) != len(bn) {
		return false
	}
	for k, v := range an {
		if bn[k] != v {
			return false
		}
	}
	return true
}

// readBoundedRows reads the state cells of the batch's counter rows, one
// getMany per table (the keys are sorted, so a table's rows are together).
func (w *Writer) readBoundedRows(ctx context.Context, bb *boundedBatch) error {
	for lo := 0; lo < len(bb.keys); {
		table := bb.rows[bb.keys[lo]].table
		fam, err := w.stateFamily(table)
		if err != nil {
			return err
		}
		hi := lo
		var gets []store.Get
		for hi < len(bb.keys) && bb.rows[bb.keys[hi]].table == table {
			gets = append(gets, store.Get{Row: bb.rows[bb.keys[hi]].row, Columns: []store.Column{{Family: fam, Qualifier: layout.QualCounterState}}})
			hi++
		}
		rows, err := w.getMany(ctx, table, gets)
		if err != nil {
			return fmt.Errorf("write: read counter rows of %s: %w", table, err)
		}
		for k, row := range rows {
			if err := bb.rows[bb.keys[lo+k]].setState(row, fam); err != nil {
				return err
			}
		}
		lo = hi
	}
	return nil
}

// readBounded reads a counter row's state cell again.
func (w *Writer) readBounded(ctx context.Context, br *boundedRow) error {
	fam, err := w.stateFamily(br.table)
	if err != nil {
		return err
	}
	row, err := w.st.Get(ctx, br.table, store.Get{Row: br.row, Columns: []store.Column{{Family: fam, Qualifier: layout.QualCounterState}}})
	if err != nil {
		return fmt.Errorf("write: read counter row %s of %s: %w", store.Printable(br.row), br.table, err)
	}
	return br.setState(row, fam)
}

// stateFamily is the family of a bounded counter table's state cell.
func (w *Writer) stateFamily(table string) (string, error) {
	t := w.plan.Table(table)
	if t == nil || !t.Counter.Bounded() {
		return "", fmt.Errorf("write: counter table %s of a Counted record is not a bounded counter of the schema", table)
	}
	return layout.CounterStateFamily(t), nil
}

// setState takes a counter row's state cell from the row read.
func (br *boundedRow) setState(row store.Row, fam string) error {
	br.raw, br.ts = nil, 0
	if c, ok := row.Latest(fam, layout.QualCounterState); ok {
		br.raw, br.ts = bytes.Clone(c.Value), c.Timestamp
	}
	st, err := layout.DecodeCounterState(br.raw)
	if err != nil {
		return fmt.Errorf("write: counter row %s of %s: %w", store.Printable(br.row), br.table, err)
	}
	br.state = st
	return nil
}

// countedMutation is the put of an entity's new record, with a tombstone
// when the row holds no live state (so that the record's timestamp does
// not make the row read as a live entity without fields).
func (w *Writer) countedMutations(ep *entityPlan) []store.Mutation {
	book := layout.BookFamily(ep.g.prim)
	ms := []store.Mutation{{Kind: store.Put, Family: book, Qualifier: layout.QualCounted, Timestamp: ep.version, Value: ep.counted.record}}
	if ep.counted.tomb {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: layout.QualTombstone, Timestamp: ep.version})
	}
	return ms
}

// applyBounded writes every counter row of the batch: one check-and-mutate
// on its state cell, retried on a fresh read when another stream's writer
// changed the row in between, CounterWriters rows at a time. It runs after
// the batch's primary rows are written: durable already, or, on a store
// whose one log a final Sync makes durable in order (store.Syncer), ahead
// of the counter rows in that log.
func (w *Writer) applyBounded(ctx context.Context, bb *boundedBatch, stats *Stats) error {
	if bb == nil || len(bb.keys) == 0 {
		return nil
	}
	var written []int
	errs := make([]bool, len(bb.keys))
	if err := eachOn(ctx, w.opts.CounterWriters, len(bb.keys), func(ctx context.Context, i int) error {
		ok, err := w.casBounded(ctx, bb.rows[bb.keys[i]])
		errs[i] = ok
		return err
	}); err != nil {
		return err
	}
	for i, ok := range errs {
		if ok {
			written = append(written, i)
		}
	}
	stats.Counted += len(written)
	return nil
}

// casBounded applies one row's deltas and sequences; it reports whether it
// wrote (a row the batch leaves as it is, as a replay of a counted batch
// does, is not written).
func (w *Writer) casBounded(ctx context.Context, br *boundedRow) (bool, error) {
	t := w.plan.Table(br.table)
	fam := layout.CounterStateFamily(t)
	for try := 0; ; try++ {
		next := &layout.CounterState{Totals: slices.Clone(br.state.Totals), Seqs: slices.Clone(br.state.Seqs)}
		changed := false
		for k, d := range br.deltas {
			f, q, _ := bytes.Cut([]byte(k), []byte{0})
			next.Add(string(f), q, d)
			changed = changed || d != 0
		}
		for s, off := range br.streams {
			if next.Seq(s) < off {
				next.Advance(s, off)
				changed = true
			}
		}
		for s, off := range br.settled {
			if next.Settled(s) < off && changed {
				next.Settle(s, off) // news for reconcile only: not worth a write alone
			}
		}
		if !changed {
			return false, nil
		}
		ts := max(time.Now().UnixMilli(), br.ts+1)
		m := store.RowMutation{Row: br.row, Durability: w.durability(br.table), Mutations: []store.Mutation{
			{Kind: store.Put, Family: fam, Qualifier: layout.QualCounterState, Timestamp: ts, Value: layout.EncodeCounterState(next)}}}
		// The totals as plain 8-byte cells too, for people reading the row
		// with other tools; the state cell is what denorm reads.
		for _, tot := range next.Totals {
			m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: tot.Family, Qualifier: tot.Qualifier, Timestamp: ts, Value: layout.Int64Cell(tot.Value)})
		}
		cond := store.Condition{Family: fam, Qualifier: layout.QualCounterState, Value: br.raw, Absent: br.raw == nil}
		ok, err := w.st.CheckAndMutate(ctx, br.table, cond, m)
		if err != nil {
			return false, fmt.Errorf("write: counter row %s of %s: %w", store.Printable(br.row), br.table, err)
		}
		if ok {
			return true, nil
		}
		if try >= 20 {
			return false, fmt.Errorf("write: counter row %s of %s: still changing after %d tries", store.Printable(br.row), br.table, try+1)
		}
		// Another stream's writer counted in the row since it was read.
		// This batch's deltas stay right (each stream has one writer, and
		// the deltas depend on this batch's streams only): re-read and
		// add them to the new totals.
		before := br.state
		if err := w.readBounded(ctx, br); err != nil {
			return false, err
		}
		for s := range br.streams {
			if br.state.Seq(s) != before.Seq(s) {
				return false, fmt.Errorf("write: counter row %s of %s: the sequence of one of the batch's streams moved while the batch was counting: two writers are applying one stream", store.Printable(br.row), br.table)
			}
		}
	}
}
