package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// Bounded counters (mode: bounded) are checked like fast ones in the
// checksum pass (the states' counts against the totals the rows' state
// cells merge to), and diffed by what the writer's invariant says each
// total holds:
//
//	total(R) = Σ over entities X of Included(record(X), seq_R(stream(X)))
//
// which is the states' sum once every batch has completed, and which also
// holds while a crashed batch awaits its replay (a repair to the states'
// sum then would be counted again by the replay). A record below a
// stream's settled position (bounded.Seq) is no longer in flight: it is
// expected at Now whatever its row says, which finds a lost row. The diff
// reads the ranges' state cells first, then scans the primary rows' Counted
// records against those sequences. A record read after the state cells is
// still right against them when it is its entity's only write since: a
// writer records Base as what the row held when it read the state, and
// changes its part only after (after two writes it is not: "Writes under
// way", below; nor is a scan that met a moving entity twice or not at all:
// "Moves under way"). A repair adds the
// difference to the row's base cell (the writers write only their streams'
// parts), with a check-and-mutate on the base cell as read, so that two
// repairs cannot both add it. A writer's put since the read does not make
// the repair wrong: every step of the writer keeps total minus Σ Included
// as it was (docs/writer.md, Lemmas 2 and 3), and the repair subtracts
// exactly that.

// boundedSnap is the state cells of a group's bounded ranges, read before
// the primary scan, and the totals the records say they should hold.
type boundedSnap struct {
	mu   sync.Mutex
	rows map[string]*snapRow // table \x00 row
	in   map[[2]int]target
	// settled is, per stream, the furthest settled position a row read
	// says: every record below it has been counted everywhere.
	settled map[uint64]int64
	// since is the writer's clock from which on a move counts as under
	// way: the job's start less recentMove.
	since int64
	// seqMax is, per stream, the furthest sequence a row had in the
	// snapshot's first pass; recent holds the streams the scan met records
	// of past it (met).
	seqMax map[uint64]int64
	recent map[uint64]bool
	// unsure holds the rows (table \x00 row) an entity that moved while
	// the scan ran counts in: the scan may have met it twice or not at all
	// (see "Moves under way" below), so their drift is left to the next
	// run.
	unsure map[string]bool
}

// Moves under way. The records are read by a scan of the primary rows in
// key order, which meets each row once, at its own moment. An entity that
// moves from row A to row B while the scan runs can be met in A before
// the move and again in B after it (counted twice), or in B before the
// move wrote it and in A after the move emptied it (its newer record in B
// superseding the one in A: counted nowhere). No rule the rows alone give
// can tell which, and parts of one job scan their ranges in other
// processes. So the writer stamps the row it moves an entity into with its
// clock (layout.QualMoved), and a row an entity moved into since the job
// started, or less than recentMove before (the clocks of the writers and
// the job agree to well under that), makes every row its record counts in
// unsure: the diff reports those rows valid, as a write in flight, and
// repairs them in a later run, once the move lies before it. A move that
// lies wholly before the job's start is seen consistently: the row moved
// to holds the record at every read of the scan, and the row left its
// tombstone, whose record the newer one supersedes.
const recentMove = time.Minute

// unsureOf marks the rows a record counts in that the group covers.
func (bs *boundedSnap) unsureOf(j *job, rec *layout.Counted) {
	if rec == nil {
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, c := range rec.Counts {
		if bs.covers(j, c.Table, c.Row) {
			bs.unsure[c.Table+"\x00"+string(c.Row)] = true
		}
	}
}

// movedLately reports whether a row's moved cell (MovedAt) says the
// entity moved into it while the job may have been scanning.
func (bs *boundedSnap) movedLately(movedAt int64) bool {
	return movedAt != 0 && movedAt >= bs.since
}

type snapRow struct {
	table string
	row   []byte
	base  layout.StateCell     // the base cell as read (Raw nil: none)
	state *layout.CounterState // the merge of the row's state cells
	// plain lists cells that are not state cells: total cells that
	// writers before part cells kept beside the state, which nothing
	// updates any more and a repair deletes.
	plain []store.Cell
	want  map[string]int64 // what the records say, family \x00 qualifier
	// parts is each stream's part cell as read (raw).
	parts map[uint64][]byte
}

func famQual(f string, q []byte) string { return f + "\x00" + string(q) }

// bounded reports whether a derived table is a bounded counter.
func (d *derivedTable) bounded() bool { return d.t.Counter.Bounded() }

// snapBounded reads the state cells of the group's bounded ranges.
func (j *job) snapBounded(ctx context.Context, group []target) (*boundedSnap, error) {
	bs := &boundedSnap{rows: map[string]*snapRow{}, in: map[[2]int]target{}, settled: map[uint64]int64{}, unsure: map[string]bool{}, recent: map[uint64]bool{}, seqMax: map[uint64]int64{},
		since: j.now - recentMove.Milliseconds()}
	if j.opts.WritersStopped {
		bs.since = math.MaxInt64 // no move can be under way
	}
	// Two passes: the settled positions and furthest sequences, then the
	// rows. A row's state is read at its own moment (on HBase a scan is
	// consistent row by row only): a position settled when another row was
	// read later could take a record for counted in a row read before its
	// batch completed, and a sequence read later could take a record for
	// written before the snapshot (met). What the first pass read held
	// before any row of the second was read.
	for pass := range 2 {
		for _, tg := range group {
			d := j.derived[tg.ti]
			if !d.bounded() {
				continue
			}
			bs.in[[2]int{tg.ti, tg.ri}] = tg
			if err := j.snapRange(ctx, bs, d, tg, pass == 0); err != nil {
				return nil, err
			}
		}
	}
	return bs, nil
}

// snapRange reads the state cells of one bounded range: into bs.settled
// (settledOnly), or into bs.rows.
func (j *job) snapRange(ctx context.Context, bs *boundedSnap, d *derivedTable, tg target, settledOnly bool) error {
	r := bounds(d.splits, tg.ri)
	sc, err := j.st.Scan(ctx, d.t.Name, store.Scan{Start: r.Start, Stop: r.Stop, Caching: 1000})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", d.t.Name, err)
	}
	defer sc.Close()
	fam := layout.CounterStateFamily(d.t)
	for sc.Next(ctx) {
		row := sc.Row()
		if !j.win.covers(d.t.Name, row.Key) {
			continue
		}
		cc, err := layout.ReadCounterCells(row, fam)
		if err != nil {
			return fmt.Errorf("reconcile: %s row %s: %w", d.t.Name, store.Printable(row.Key), err)
		}
		if settledOnly {
			// A slice of the range (slice.go) diffs its own rows, but
			// every row's settled positions count: a slice sees what a
			// whole diff would.
			for _, q := range cc.Merged().Seqs {
				bs.settled[q.Stream] = max(bs.settled[q.Stream], q.Settled)
				if was, ok := bs.seqMax[q.Stream]; !ok || q.Offset > was {
					bs.seqMax[q.Stream] = q.Offset
				}
			}
			continue
		}
		if !tg.has(row.Key, nil) {
			continue
		}
		sr := &snapRow{table: d.t.Name, row: bytes.Clone(row.Key), want: map[string]int64{}}
		for _, c := range row.Cells {
			if !(c.Family == fam && layout.IsCounterState(c.Qualifier)) {
				sr.plain = append(sr.plain, store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Timestamp: c.Timestamp})
			}
		}
		sr.base, sr.state = cc.Base, cc.Merged()
		for s, p := range cc.Parts {
			if sr.parts == nil {
				sr.parts = map[uint64][]byte{}
			}
			sr.parts[s] = p.Raw
		}
		bs.rows[d.t.Name+"\x00"+string(row.Key)] = sr
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", d.t.Name, err)
	}
	return nil
}

// superseded reports, for each row rows[k] with ask[k] set, whether its
// Counted record is not its entity's newest, which alone says what the
// totals hold of it (the writer's invariant takes each entity's newest
// record). An entity that moves (a change of a primary key field, followed
// by its locator) leaves its record in the row it left, under the
// tombstone the move puts there, and writes a newer one in the row it
// moves to; the rows it left are unlisted from its locator row. So a row
// is checked against the rows its locator lists: one holding a newer
// record makes its record a leftover.
//
// A live row is a leftover too while a move is half done: a writer that
// died between writing the new row and putting the tombstone in the old
// one (or two writers that each moved the entity from the row it read)
// leaves the entity live in both, and the new row's record already counts
// what the old row's does, as its Base. Counted both, a repair in that
// window set a total to the entity counted twice, which the replay of the
// move then left wrong. A live row is checked only against rows its
// locator lists at a newer version, so an entity that never moved costs
// its locator row, read with the chunk's others in multi-gets; the Counted
// cells of the rows listed at newer versions are one more multi-get. A
// record older than the delete its locator row records is a leftover
// whatever the rows hold (locator.go, leftBehind, says why).
//
// A newer record in a row the entity moved into lately makes both
// records' rows unsure (bs.unsureOf: "Moves under way").
func (j *job) superseded(ctx context.Context, bs *boundedSnap, rows []store.Row, states []*layout.State, ask []bool) ([]bool, error) {
	old := make([]bool, len(rows))
	if j.loc == nil {
		return old, nil
	}
	var asked []int // the row of each locator Get
	var gets []store.Get
	for k := range rows {
		if !ask[k] || states[k].Counted == nil {
			continue
		}
		g, err := j.locatorGet(rows[k].Key)
		if err != nil {
			return nil, err
		}
		asked = append(asked, k)
		gets = append(gets, g)
	}
	locs, err := j.getMany(ctx, j.loc.Name, gets)
	if err != nil {
		return nil, fmt.Errorf("reconcile: read locator rows of %s: %w", j.loc.Name, err)
	}
	book := layout.BookFamily(j.prim)
	// The row each Get is for, and for a Get of the row itself (own) the
	// delete its locator row records.
	type recGet struct {
		k    int
		own  bool
		tomb int64
	}
	var listed []recGet
	gets = gets[:0]
	for i, k := range asked {
		at, tomb := layout.ReadLocation(j.loc, locs[i])
		st := states[k]
		// A delete recorded after the record was written: the deleting
		// writer records it after emptying the rows it knows, and wrote
		// no record here, so it never knew this row (a second log stream
		// of the entity); the row is left behind, and counts nothing. Or
		// it wrote its record here after the scan read the row: the row,
		// read again, says which.
		if tomb > st.CountedAt {
			listed = append(listed, recGet{k: k, own: true, tomb: tomb})
			gets = append(gets, store.Get{Row: rows[k].Key, Columns: []store.Column{{Family: book, Qualifier: layout.QualCounted}}})
		}
		for _, x := range at {
			if bytes.Equal(x.Key, rows[k].Key) || st.Exists() && x.Version <= st.Version {
				continue
			}
			listed = append(listed, recGet{k: k})
			gets = append(gets, store.Get{Row: x.Key, Columns: []store.Column{{Family: book, Qualifier: layout.QualCounted}, {Family: book, Qualifier: layout.QualMoved}}})
		}
	}
	recs, err := j.getMany(ctx, j.prim.Name, gets)
	if err != nil {
		return nil, fmt.Errorf("reconcile: read %s rows its locator lists: %w", j.prim.Name, err)
	}
	for i, r := range recs {
		k := listed[i].k
		c, ok := r.Latest(book, layout.QualCounted)
		if listed[i].own {
			if !ok || c.Timestamp < listed[i].tomb {
				old[k] = true
			}
			continue
		}
		if !ok || c.Timestamp <= states[k].CountedAt {
			continue
		}
		old[k] = true
		m, ok := r.Latest(book, layout.QualMoved)
		if !ok {
			continue
		}
		at, err := layout.ParseMoved(m.Value)
		if err != nil {
			return nil, fmt.Errorf("reconcile: %s row %s: %w", j.prim.Name, store.Printable(r.Key), err)
		}
		if !bs.movedLately(at) {
			continue
		}
		newer, err := layout.DecodeCounted(c.Value)
		if err != nil {
			return nil, fmt.Errorf("reconcile: counted record of %s row %s: %w", j.prim.Name, store.Printable(r.Key), err)
		}
		bs.unsureOf(j, newer)
		bs.unsureOf(j, states[k].Counted)
	}
	return old, nil
}

// getMany reads gets in multi-gets of locatorChunk rows.
func (j *job) getMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	out := make([]store.Row, 0, len(gets))
	for lo := 0; lo < len(gets); lo += locatorChunk {
		rows, err := store.GetMany(ctx, j.st, table, gets[lo:min(len(gets), lo+locatorChunk)])
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// count adds what one primary row's Counted record says the group's
// bounded rows hold of its entity. Deleted entities count too: a delete
// whose batch crashed is still in the totals until it is replayed.
func (bs *boundedSnap) count(j *job, st *layout.State) {
	if st.Counted == nil || len(bs.in) == 0 {
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, c := range st.Counted.Counts {
		if !bs.covers(j, c.Table, c.Row) {
			continue
		}
		sr := bs.row(c.Table, c.Row)
		v := c.Base
		if bs.reached(st.Counted, sr) {
			v = c.Now
		}
		sr.want[famQual(c.Family, c.Qualifier)] += v
	}
}

// met notes a record the scan read, whatever rows it names: its stream
// has records the scan may have read after a second write since the
// snapshot, unless some row's sequence for the stream had reached the
// record's offset when the snapshot's first pass read it (a record is
// written while every row's sequence is below its offset, so this one was
// written before any row was read). See "Writes under way".
func (bs *boundedSnap) met(rec *layout.Counted) {
	if rec == nil || len(bs.in) == 0 {
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if q, ok := bs.seqMax[rec.Stream]; ok && rec.Offset <= q {
		return
	}
	bs.recent[rec.Stream] = true
}

// covers reports whether a bounded counter row is in one of the ranges the
// group diffs (bs.in is set before the scan and only read after it).
func (bs *boundedSnap) covers(j *job, table string, row []byte) bool {
	ti, ri, ok := j.slotOf(table, row)
	if !ok {
		return false
	}
	tg, ok := bs.in[[2]int{ti, ri}]
	return ok && tg.has(row, nil)
}

// names reports whether a record counts in a row the group diffs.
func (bs *boundedSnap) names(j *job, rec *layout.Counted) bool {
	return rec != nil && slices.ContainsFunc(rec.Counts, func(c layout.Count) bool { return bs.covers(j, c.Table, c.Row) })
}

// reached reports whether a row's totals hold Now of a record rather than
// Base: the row's sequence for the record's stream has reached the
// record's offset, or the stream is settled past it, whatever the row says
// (which finds a lost row). bs.mu is held.
func (bs *boundedSnap) reached(rec *layout.Counted, sr *snapRow) bool {
	if s, ok := bs.settled[rec.Stream]; ok && rec.Offset < s {
		return true
	}
	return sr != nil && sr.state.Seq(rec.Stream) >= rec.Offset
}

// share is what a bounded cell's total holds of an entity, by its record
// and the row's state cells as read: Now once the row's sequence for the
// record's stream has reached the record's offset (or the stream is settled
// past it), Base while it has not, which is known only when the two are
// equal; otherwise the batch that wrote the record may still be in flight.
func (bs *boundedSnap) share(rec *layout.Counted, r layout.Ref) (int64, bool) {
	if v, ok := rec.Fixed(r); ok {
		return v, true
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.reached(rec, bs.rows[r.Table+"\x00"+string(r.Row)]) {
		return rec.Included(r, math.MaxInt64), true
	}
	return 0, false
}

// row is the snapshot of a bounded row, made empty when the scan met no
// such row (a row a record counts in that is missing). bs.mu is held.
func (bs *boundedSnap) row(table string, row []byte) *snapRow {
	k := table + "\x00" + string(row)
	sr := bs.rows[k]
	if sr == nil {
		sr = &snapRow{table: table, row: bytes.Clone(row), base: layout.StateCell{State: &layout.CounterState{}}, state: &layout.CounterState{}, want: map[string]int64{}}
		bs.rows[k] = sr
	}
	return sr
}

// diffBounded compares each bounded row with what the records say and
// repairs the rows that differ: a wrong total, a missing row, an extra one
// no record counts in, or one that still holds plain total cells.
func (j *job) diffBounded(ctx context.Context, rep *Report, bs *boundedSnap) error {
	keys := make([]string, 0, len(bs.rows))
	for k := range bs.rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c := rep.Kinds[KindCounter]
	for _, k := range keys {
		sr := bs.rows[k]
		t := j.sp.Table(sr.table)
		if bs.unsure[k] {
			c.Valid += int64(len(t.Counter.Adds)) // a move in flight: the next run
			continue
		}
		next := &layout.CounterState{Totals: slices.Clone(sr.base.State.Totals), Seqs: slices.Clone(sr.base.State.Seqs)}
		var drifted int64 // add columns off from what the records say
		for _, a := range t.Counter.Adds {
			fq := famQual(a.Family, []byte(a.Qualifier))
			want := sr.want[fq]
			have := sr.state.Total(a.Family, []byte(a.Qualifier))
			if have == want && len(sr.plain) == 0 {
				continue
			}
			drifted++
			next.Add(a.Family, []byte(a.Qualifier), want-have)
		}
		if drifted > 0 {
			moved, err := j.countedSince(ctx, bs, sr)
			if err != nil {
				return err
			}
			if moved {
				drifted = 0 // writes in flight: the next run
			}
		}
		c.Valid += int64(len(t.Counter.Adds)) - drifted
		c.Drifted += drifted
		if drifted == 0 || j.opts.DryRun {
			continue
		}
		// The repaired totals hold Now of every settled record: the row's
		// sequences say so too (no event below a settled position is still
		// to be written, so raising them there is safe).
		for s, off := range bs.settled {
			if off > 0 {
				next.Advance(s, off-1)
				next.Settle(s, off)
			}
		}
		if err := j.setBounded(ctx, rep, t.Name, sr, next); err != nil {
			return err
		}
	}
	return nil
}

// Writes under way. A record written since the row's state cells were
// read says in Base what the row held of its entity when its writer read
// the row, which is what the state as read holds of it as long as that
// write was the entity's only one since. After two (the first one's batch
// completed, changing the row's part for the stream), Base is the first
// write's Now, which the state as read does not hold: a drift that is
// none. The second write's record need not even name the row (an entity
// whose count there went to 0 and was then deleted names it no more).
// So a drifted row is read again before its repair, and left to a later
// run when its base cell, or the part cell of a stream the scan met
// records of written since the snapshot began (met), changed since the
// snapshot: only a completed batch of the stream changes its part. A
// batch that completes after this read wrote its records after the scan
// read them (one batch of a stream runs at a time), so none of those is a
// second write.

// countedSince reads a bounded row again and reports whether a repair, or
// a stream the scan met recent records of, has written its state cells
// since the snapshot read them.
func (j *job) countedSince(ctx context.Context, bs *boundedSnap, sr *snapRow) (bool, error) {
	t := j.sp.Table(sr.table)
	fam := layout.CounterStateFamily(t)
	row, err := j.st.Get(ctx, sr.table, store.Get{Row: sr.row, Columns: []store.Column{{Family: fam}}})
	if err != nil {
		return false, fmt.Errorf("reconcile: read %s row %s again: %w", sr.table, store.Printable(sr.row), err)
	}
	cc, err := layout.ReadCounterCells(row, fam)
	if err != nil {
		return false, fmt.Errorf("reconcile: %s row %s: %w", sr.table, store.Printable(sr.row), err)
	}
	if !bytes.Equal(cc.Base.Raw, sr.base.Raw) || (cc.Base.Raw == nil) != (sr.base.Raw == nil) {
		return true, nil
	}
	changed := func(s uint64) bool {
		p, ok := cc.Parts[s]
		was, had := sr.parts[s]
		return bs.recent[s] && (ok != had || !bytes.Equal(p.Raw, was))
	}
	for s := range cc.Parts {
		if changed(s) {
			return true, nil
		}
	}
	for s := range sr.parts {
		if changed(s) {
			return true, nil
		}
	}
	return false, nil
}

// setBounded writes a bounded row's repaired base cell on the base cell as
// read, deletes its plain cells, then reads it back.
func (j *job) setBounded(ctx context.Context, rep *Report, table string, sr *snapRow, next *layout.CounterState) error {
	t := j.sp.Table(table)
	fam := layout.CounterStateFamily(t)
	ts := max(time.Now().UnixMilli(), sr.base.TS+1)
	m := store.RowMutation{Row: sr.row, Mutations: []store.Mutation{{Kind: store.Put, Family: fam, Qualifier: layout.QualCounterState, Timestamp: ts, Value: layout.EncodeCounterState(next)}}}
	for _, c := range sr.plain {
		m.Mutations = append(m.Mutations, store.Mutation{Kind: store.DeleteColumn, Family: c.Family, Qualifier: c.Qualifier, Timestamp: max(ts, c.Timestamp)})
	}
	cond := store.Condition{Family: fam, Qualifier: layout.QualCounterState, Value: sr.base.Raw, Absent: sr.base.Raw == nil}
	ok, err := j.st.CheckAndMutate(ctx, table, cond, m)
	if err != nil || !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cause := "another repair changed the row's base cell since it was read"
		if err != nil {
			cause = fmt.Sprintf("the store refused the repair: %v", err)
		}
		rep.fail(KindCounter, table, sr.row, cause)
		return nil
	}
	c := rep.Kinds[KindCounter]
	c.Repaired++
	got, err := j.st.Get(ctx, table, store.Get{Row: sr.row})
	if err != nil {
		return fmt.Errorf("reconcile: read back %s row %s: %w", table, store.Printable(sr.row), err)
	}
	cell, ok := got.Latest(fam, layout.QualCounterState)
	if ok && bytes.Equal(cell.Value, m.Mutations[0].Value) {
		c.Fixed++
		return nil
	}
	if ok && cell.Timestamp > ts {
		return nil // another repair after this one: the next run checks it
	}
	rep.fail(KindCounter, table, sr.row, fmt.Sprintf("the repaired state at ts %d is not visible: masked by a delete marker", ts))
	return nil
}
