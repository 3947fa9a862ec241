package write

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/denorm/denorm/event"
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
// A batch keeps it in three steps: work out what each counter row holds of
// each entity (reading the rows where that depends on the row's sequence);
// write each entity's new record with its primary row (Base = what R holds
// of it now, Now = its new counts, offset = its winning event's); then one
// check-and-mutate per row where some entity's Base and Now differ adds
// Σ (Now - Base) and raises the row's sequence for each stream to the
// batch's last offset. docs/writer.md
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
	// read: the batch needs the row's state read (set by planBounded);
	// changes: a share known without the row changes, so the row is
	// written; guessed: its state is the one last seen, not read.
	read, changes, guessed bool
	// What the batch does to it.
	deltas  map[string]int64 // family \x00 qualifier -> delta
	streams map[uint64]int64 // stream -> offset to raise its sequence to
	settled map[uint64]int64 // stream -> where the batch began
	// moves: some entity's contribution of the batch has Base != Now, so
	// the row must be written (its sequence raised). A row where every
	// contribution has Base == Now is left alone: its totals do not change,
	// and no record's Included depends on the sequence (docs/writer.md,
	// "rows a batch leaves alone").
	moves bool
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
// ep.counted). It runs before anything of the batch is written. A row is
// read only when the batch needs what it holds: some entity's share of it
// depends on the row's sequence, or the batch will write it.
func (w *Writer) planBounded(ctx context.Context, plans []*entityPlan, firsts map[uint64]int64) (*boundedBatch, error) {
	bb := &boundedBatch{rows: map[string]*boundedRow{}}
	maxOff, minOff := map[uint64]int64{}, map[uint64]int64{}
	var eps []*entityPlan
	var contribs [][]boundedShare
	for _, ep := range plans {
		if !w.hasBounded(ep.g.ent.Name) {
			continue
		}
		win := winner(ep)
		if win == nil || win.stream == "" {
			return nil, fmt.Errorf("write: %s %s: no position for the event a bounded counter counts", ep.g.ent.Name, store.Printable(ep.g.events[0].groupKey))
		}
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
		shares := boundedShares(ep, firsts)
		for i := range shares {
			sh := &shares[i]
			k := boundedKey(sh.ref.Table, sh.ref.Row)
			br := bb.rows[k]
			if br == nil {
				br = &boundedRow{table: sh.ref.Table, row: sh.ref.Row, deltas: map[string]int64{}, streams: map[uint64]int64{}, settled: map[uint64]int64{}}
				bb.rows[k] = br
				bb.keys = append(bb.keys, k)
			}
			sh.row = br
			// A share that is Base or Now by the sequence needs the row's
			// sequence; one known without it needs the row only when it
			// changes, since the row is then written.
			switch {
			case !sh.fixed:
				br.read = true
			case sh.inc != sh.now:
				br.changes = true
			}
		}
		eps = append(eps, ep)
		contribs = append(contribs, shares)
	}
	if len(eps) == 0 {
		return bb, nil
	}
	slices.Sort(bb.keys)
	// A row the batch writes but whose every share is known needs its
	// state only as the condition of the check-and-mutate: the state last
	// seen will do (guesses.go).
	for _, k := range bb.keys {
		br := bb.rows[k]
		if br.read || !br.changes {
			continue
		}
		g, ok := w.guesses.get(k)
		if !ok {
			br.read = true
			continue
		}
		st, err := layout.DecodeCounterState(g.raw)
		if err != nil {
			br.read = true
			continue
		}
		br.raw, br.ts, br.state, br.guessed = g.raw, g.ts, st, true
	}
	if err := w.readBoundedRows(ctx, bb); err != nil {
		return nil, err
	}
	for i, ep := range eps {
		win := winner(ep)
		s := layout.StreamID(win.stream)
		old, oldRow := newestCounted(ep.g)
		rec := &layout.Counted{Stream: s, Offset: win.offset}
		for _, sh := range contribs[i] {
			br := sh.row
			inc := sh.inc
			if !sh.fixed {
				inc = old.Included(sh.ref, br.state.Seq(old.Stream))
			}
			n := sh.now
			if inc != 0 || n != 0 {
				rec.Counts = append(rec.Counts, layout.Count{Ref: sh.ref, Base: inc, Now: n})
			}
			if d := n - inc; d != 0 {
				br.deltas[sh.ref.Family+"\x00"+string(sh.ref.Qualifier)] += d
				// Written even when the row's deltas sum to zero: from
				// the batch on, the row's sequence is at or past the
				// offset of every record whose Base and Now differ
				// (docs/writer.md, "bounded counters").
				br.moves = true
			}
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

// boundedShare is an entity's count in one counter cell: what the row holds
// of it now (inc, when fixed: known without the row's sequence) and what it
// will hold (now).
type boundedShare struct {
	ref   layout.Ref
	row   *boundedRow
	inc   int64
	fixed bool
	now   int64
}

// boundedShares are the cells an entity counts in, before or after the
// batch, sorted by ref: those of its final state and those its newest
// record names. A share is known without the row (fixed) when the record
// does not name the cell or names it with Base equal to Now, or when the
// record is of one of the batch's streams and below the batch's first
// offset in it: a batch of the stream that completed wrote it, and raised
// every row where its Base and Now differ past it (docs/writer.md,
// "shares known without the row").
func boundedShares(ep *entityPlan, firsts map[uint64]int64) []boundedShare {
	old, _ := newestCounted(ep.g)
	var out []boundedShare
	for _, in := range boundedCounts(ep) {
		out = append(out, boundedShare{ref: layout.Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}, now: in.Delta})
	}
	if old != nil {
		for _, c := range old.Counts {
			if !slices.ContainsFunc(out, func(sh boundedShare) bool { return sh.ref.Compare(c.Ref) == 0 }) {
				out = append(out, boundedShare{ref: c.Ref})
			}
		}
	}
	slices.SortFunc(out, func(a, b boundedShare) int { return a.ref.Compare(b.ref) })
	counted := false
	if old != nil {
		first, ok := firsts[old.Stream]
		counted = ok && old.Offset < first
	}
	for i := range out {
		if counted {
			out[i].inc, out[i].fixed = old.Included(out[i].ref, math.MaxInt64), true
		} else {
			out[i].inc, out[i].fixed = old.Fixed(out[i].ref)
		}
	}
	return out
}

// firstOffsets is, per stream, the offset of the first of evs in it (events
// without a position take the lane's).
func firstOffsets(evs []*event.Event, ln *lane) map[uint64]int64 {
	out := map[uint64]int64{}
	for i, ev := range evs {
		stream, off := ev.Stream, ev.Offset
		if stream == "" {
			if ln == nil {
				continue
			}
			stream, off = ln.stream, ln.next+int64(i)
		}
		id := layout.StreamID(stream)
		if o, ok := out[id]; !ok || off < o {
			out[id] = off
		}
	}
	return out
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

// readBoundedRows reads the state cells of the batch's counter rows that it
// needs (read), one getMany per table (the keys are sorted, so a table's
// rows are together).
func (w *Writer) readBoundedRows(ctx context.Context, bb *boundedBatch) error {
	for lo := 0; lo < len(bb.keys); {
		table := bb.rows[bb.keys[lo]].table
		fam, err := w.stateFamily(table)
		if err != nil {
			return err
		}
		var gets []store.Get
		var read []*boundedRow
		for ; lo < len(bb.keys) && bb.rows[bb.keys[lo]].table == table; lo++ {
			if br := bb.rows[bb.keys[lo]]; br.read {
				gets = append(gets, store.Get{Row: br.row, Columns: []store.Column{{Family: fam, Qualifier: layout.QualCounterState}}})
				read = append(read, br)
			}
		}
		if len(gets) == 0 {
			continue
		}
		rows, err := w.getMany(ctx, table, gets)
		if err != nil {
			return fmt.Errorf("write: read counter rows of %s: %w", table, err)
		}
		for k, row := range rows {
			if err := read[k].setState(row, fam); err != nil {
				return err
			}
			w.guesses.put(boundedKey(read[k].table, read[k].row), read[k].raw, read[k].ts)
		}
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
	if err := br.setState(row, fam); err != nil {
		return err
	}
	w.guesses.put(boundedKey(br.table, br.row), br.raw, br.ts)
	return nil
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

// applyBounded writes every counter row of the batch where some share
// moves: one check-and-mutate on its state cell (as read, or as last
// seen), retried on a fresh read when the row is not that any more
// (another stream counted in it, or the guess was stale), CounterWriters
// rows at a time. It runs after
// the batch's primary rows are written: durable already, or, on a store
// whose one log a final Sync makes durable in order (store.Syncer), ahead
// of the counter rows in that log.
func (w *Writer) applyBounded(ctx context.Context, bb *boundedBatch, stats *Stats) error {
	if bb == nil || len(bb.keys) == 0 {
		return nil
	}
	var moving []*boundedRow
	for _, k := range bb.keys {
		if br := bb.rows[k]; br.moves {
			if br.state == nil {
				return fmt.Errorf("write: counter row %s of %s: written without its state (a bug)", store.Printable(br.row), br.table)
			}
			moving = append(moving, br)
		}
	}
	wrote := make([]bool, len(moving))
	retries := make([]int, len(moving))
	if err := eachOn(ctx, w.opts.CounterWriters, len(moving), func(ctx context.Context, i int) error {
		ok, n, err := w.casBounded(ctx, moving[i])
		wrote[i], retries[i] = ok, n
		return err
	}); err != nil {
		return err
	}
	for i, ok := range wrote {
		if ok {
			stats.Counted++
		}
		stats.CounterRetries += retries[i]
	}
	return nil
}

// casBounded applies one row's deltas and sequences; it reports whether it
// wrote (a row the batch leaves as it is, as a replay of a counted batch
// does, is not written) and how many of its tries found the row changed.
func (w *Writer) casBounded(ctx context.Context, br *boundedRow) (wrote bool, retries int, err error) {
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
			return false, try, nil
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
		key := boundedKey(br.table, br.row)
		if err != nil {
			w.guesses.forget(key)
			return false, try, fmt.Errorf("write: counter row %s of %s: %w", store.Printable(br.row), br.table, err)
		}
		if ok {
			w.guesses.put(key, m.Mutations[0].Value, ts)
			return true, try, nil
		}
		if try >= 20 {
			return false, try, fmt.Errorf("write: counter row %s of %s: still changing after %d tries", store.Printable(br.row), br.table, try+1)
		}
		// The row changed since it was read (another stream's writer
		// counted in it) or last seen (the guess was stale). This batch's
		// deltas stay right (each stream has one writer, and the deltas
		// depend on this batch's streams only): re-read and add them to
		// the new totals.
		before, guessed := br.state, br.guessed
		br.guessed = false
		if err := w.readBounded(ctx, br); err != nil {
			return false, try, err
		}
		if guessed {
			// The state was the one last seen, not read with the batch's
			// records: its sequences say nothing of who moved them since,
			// and the batch's deltas did not use them.
			continue
		}
		for s := range br.streams {
			if br.state.Seq(s) != before.Seq(s) {
				return false, try, fmt.Errorf("write: counter row %s of %s: the sequence of one of the batch's streams moved while the batch was counting: two writers are applying one stream", store.Printable(br.row), br.table)
			}
		}
	}
}
