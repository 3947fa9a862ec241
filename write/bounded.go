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
// column and one sequence per log stream, spread over one part cell per
// stream (layout/counterparts.go); an entity's primary row holds a Counted
// record: per counter cell, Base (what the total holds of the entity while
// the row's sequence for the record's stream is below the record's offset)
// and Now (what it holds from then on). The invariant, for every row R and
// add column:
//
//	total(R) = Σ over entities X of Included(record(X), seq_R(stream(X)))
//
// A batch keeps it in three steps: work out what each counter row holds of
// each entity (reading the rows where that depends on the row's sequence);
// write each entity's new record with its primary row (Base = what R holds
// of it now, Now = its new counts, offset = its winning event's); then, in
// every row where some entity's Base and Now differ, a plain put of each
// stream's part cell adds the Σ (Now - Base) of the entities whose records
// are of that stream and raises its sequence to the batch's last offset.
// Only the stream's writer writes its part, so the put needs no condition;
// the puts go out in one Batch per counter table. docs/writer.md
// proves that replays, reordering, duplicates and a crash between any two
// writes keep the invariant, and that a batch that completes leaves every
// entity it touched with Included = Now.

// boundedRow is one counter row a batch counts in.
type boundedRow struct {
	table string
	row   []byte
	// What the row held when read: its state cells and their merge.
	cells *layout.CounterCells
	state *layout.CounterState
	// read: the batch needs the row's state read (set by planBounded);
	// changes: a share known without the row changes, so the row is
	// written (and read first: a part is written as read plus deltas).
	read, changes bool
	// What the batch does to it.
	deltas  map[uint64]map[string]int64 // stream -> family \x00 qualifier -> delta
	streams map[uint64]int64            // stream -> offset to raise its sequence to
	settled map[uint64]int64            // stream -> where the batch began
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
	// readAt is the time, in ms, before the batch read its counter rows:
	// the least timestamp of its part puts (partMutations says why).
	readAt int64
}

// countedWrite is an entity's new Counted record and the row it goes to.
type countedWrite struct {
	row    []byte
	record []byte
	tomb   bool // the row holds no live state: a tombstone goes with it
	// moved: the entity's newest record is in another row (a move, or a
	// re-creation in another row after a delete). The row gets a moved
	// cell with the writer's clock (layout.QualMoved): a reconcile run
	// under way cannot tell which of the entity's rows its scan met
	// before the write.
	moved bool
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
			id := p.streamID
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
				br = &boundedRow{table: sh.ref.Table, row: sh.ref.Row, deltas: map[uint64]map[string]int64{}, streams: map[uint64]int64{}, settled: map[uint64]int64{}}
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
				br.changes, br.read = true, true
			}
		}
		eps = append(eps, ep)
		contribs = append(contribs, shares)
	}
	if len(eps) == 0 {
		return bb, nil
	}
	slices.Sort(bb.keys)
	bb.readAt = time.Now().UnixMilli()
	if err := w.readBoundedRows(ctx, bb); err != nil {
		return nil, err
	}
	for i, ep := range eps {
		win := winner(ep)
		s := win.streamID
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
				if br.deltas[s] == nil {
					br.deltas[s] = map[string]int64{}
				}
				br.deltas[s][sh.ref.Family+"\x00"+string(sh.ref.Qualifier)] += d
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
		if old == nil && len(rec.Counts) == 0 && !(ep.writePrimary && ep.key != nil) {
			continue // counts nothing, never did, and no row is written
		}
		// An entity that counts nothing still gets a record (with no
		// counts) when its primary row is written: every write of the row
		// then changes the record, which is what reconcile's adoption of
		// uncounted entities checks before it writes one (reconcile/adopt.go).
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
		cw.moved = oldRow != nil && !bytes.Equal(cw.row, oldRow)
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
	counted := old != nil && settledBy(firsts, old.Stream, old.Offset)
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
	var ids streamIDs
	for i, ev := range evs {
		stream, off := ev.Stream, ev.Offset
		if stream == "" {
			if ln == nil {
				continue
			}
			stream, off = ln.stream, ln.next+int64(i)
		}
		id := ids.of(stream)
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
				// The whole family: the base cell, every stream's part and,
				// in rows written before parts, plain total cells (a few
				// cells in all).
				gets = append(gets, store.Get{Row: br.row, Columns: []store.Column{{Family: fam}}})
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
			cc, err := layout.ReadCounterCells(row, fam)
			if err != nil {
				return fmt.Errorf("write: counter row %s of %s: %w", store.Printable(read[k].row), table, err)
			}
			read[k].cells, read[k].state = cc, cc.Merged()
		}
	}
	return nil
}

// stateFamily is the family of a bounded counter table's state cells.
func (w *Writer) stateFamily(table string) (string, error) {
	t := w.plan.Table(table)
	if t == nil || !t.Counter.Bounded() {
		return "", fmt.Errorf("write: counter table %s of a Counted record is not a bounded counter of the schema", table)
	}
	return layout.CounterStateFamily(t), nil
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
	if ep.counted.moved {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: layout.QualMoved, Timestamp: ep.version, Value: layout.MovedCell(w.opts.Clock())})
	}
	return ms
}

// applyBounded writes every counter row of the batch where some share
// moves: the part cells of the batch's streams there, as read plus the
// deltas, one Batch per counter table. It runs after
// the batch's primary rows are written: durable already, or, on a store
// whose one log a final Sync makes durable in order (store.Syncer), ahead
// of the counter rows in that log.
func (w *Writer) applyBounded(ctx context.Context, bb *boundedBatch, stats *Stats) error {
	if bb == nil || len(bb.keys) == 0 {
		return nil
	}
	var parts rowMuts
	for _, k := range bb.keys { // sorted: each table's rows in key order
		br := bb.rows[k]
		if !br.moves {
			continue
		}
		if br.cells == nil {
			return fmt.Errorf("write: counter row %s of %s: written without its state (a bug)", store.Printable(br.row), br.table)
		}
		if ms := w.partMutations(br, bb.readAt); len(ms) > 0 {
			parts.add(br.table, br.row, ms...)
		}
	}
	tables := parts.tables()
	if err := w.parallel(ctx, tables, func(ctx context.Context, t string) error {
		return w.batch(ctx, t, parts.byTable[t])
	}); err != nil {
		return err
	}
	for _, t := range tables {
		stats.Counted += len(parts.byTable[t])
	}
	return nil
}

// partMutations are the puts of the part cells of one row: for each of
// the batch's streams there, the part as read plus the deltas of the
// records of that stream, its sequence raised to the batch's last offset.
// There are none when the row is already where the batch would take it (a
// replay of a counted batch).
//
// The put's timestamp is the time the batch read the row (readAt), or just
// above the part's own when that is later: not the time of the put. Of
// two writers of one stream (a Kafka member that lost its partitions in
// the middle of a batch and still writes, and the partition's new owner),
// the one that read later then wins, whichever put lands last: the
// owner's part, which counts the stalled member's events too, is not
// replaced by an older one (docs/writer.md, "why no check-and-mutate").
func (w *Writer) partMutations(br *boundedRow, readAt int64) []store.Mutation {
	fam := layout.CounterStateFamily(w.plan.Table(br.table))
	var ms []store.Mutation
	streams := make([]uint64, 0, len(br.streams))
	for s := range br.streams {
		streams = append(streams, s)
	}
	slices.Sort(streams)
	for _, s := range streams {
		part := br.cells.Part(s)
		next := &layout.CounterState{Totals: slices.Clone(part.State.Totals), Seqs: slices.Clone(part.State.Seqs)}
		changed := false
		for k, d := range br.deltas[s] {
			f, q, _ := bytes.Cut([]byte(k), []byte{0})
			next.Add(string(f), q, d)
			changed = changed || d != 0
		}
		// The row's sequence for s is the largest any of its cells gives
		// (a base cell written before parts may be ahead of the part).
		if off, seq := br.streams[s], br.state.Seq(s); seq < off {
			next.Advance(s, off)
			changed = true
		} else if next.Seq(s) < seq {
			next.Advance(s, seq)
		}
		if !changed {
			continue
		}
		if off := br.settled[s]; br.state.Settled(s) < off {
			next.Settle(s, off) // news for reconcile only: not worth a write alone
		}
		ms = append(ms, store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.CounterPartQualifier(s), Timestamp: max(readAt, part.TS+1), Value: layout.EncodeCounterState(next)})
	}
	return ms
}

// streamIDs is layout.StreamID for the streams of one batch, which are
// mostly one: the last stream's id is kept.
type streamIDs struct {
	last string
	id   uint64
	set  bool
}

func (s *streamIDs) of(stream string) uint64 {
	if !s.set || stream != s.last {
		s.last, s.id, s.set = stream, layout.StreamID(stream), true
	}
	return s.id
}
