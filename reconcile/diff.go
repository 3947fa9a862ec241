package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// A range whose checksums disagree is diffed row by row, in bounded
// memory: the primary table is scanned again and every entity derived, and
// the copies that fall in the ranges being diffed are kept (a range holds
// about PlanOptions.RangeRows rows; ranges are diffed in groups of at most
// Options.DiffCells cells); then each range is scanned and compared with
// them. A stored row they lack is an orphan when the primary row its ref
// cell names, read again, does not derive it; a kept copy the scan did not
// meet is read again with a Get and is missing if still absent. Only the
// unequal ranges of derived tables are read again, so one fault costs one
// range and one scan of the primary table.

// defaultDiffCells is Options.DiffCells when 0: a kept copy costs a few
// hundred bytes, so a group holds some tens of MB at most.
const defaultDiffCells = 100000

// fastSum is the recomputed total of one fast-mode counter cell.
type fastSum struct {
	layout.Ref
	Sum int64
}

// unknownContribution is a contribution whose entity the re-derivation did
// not meet.
type unknownContribution struct {
	ref layout.Ref
	ek  string
	ts  int64
}

func (j *job) diff(ctx context.Context, rep *Report, todo []target) error {
	limit := j.opts.DiffCells
	if limit <= 0 {
		limit = defaultDiffCells
	}
	todo = sliceTargets(todo, int64(limit))
	for len(todo) > 0 {
		n, cells := 0, int64(0)
		for n < len(todo) {
			c := max(todo[n].exp.Cells, todo[n].stored.Cells) / int64(todo[n].slices)
			// A slice is diffed alone: two slices of one range in a group
			// would each take the other's copies for orphans.
			if n > 0 && (cells+c > int64(limit) || todo[n].slices > 1 || todo[0].slices > 1) {
				break
			}
			cells += c
			n++
		}
		if err := j.diffGroup(ctx, rep, todo[:n]); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// diffGroup diffs a group of unequal ranges.
func (j *job) diffGroup(ctx context.Context, rep *Report, group []target) error {
	in := map[[2]int]target{}
	for _, tg := range group {
		in[[2]int{tg.ti, tg.ri}] = tg
	}
	// keeps reports whether a derived copy (a row, or a counter cell) is
	// one the group diffs.
	keeps := func(ti, ri int, row, qual []byte) bool {
		tg, ok := in[[2]int{ti, ri}]
		return ok && tg.has(row, qual)
	}
	want := map[string]*expect{}
	sums := map[string]*fastSum{}
	ents := map[string][]byte{} // entity key -> primary key, for contributions
	n := j.workers()
	items := make([][]*expect, n)
	incs := make([][]layout.Increment, n)
	adopts := make([][]adoption, n)
	book := layout.BookFamily(j.prim)
	// Bounded ranges: their state cells first, then the records against
	// them (bounded.go says why in this order).
	bs, err := j.snapBounded(ctx, group)
	if err != nil {
		return err
	}
	covered := func(table string, row []byte) bool { return bs.covers(j, table, row) }
	err = j.scanChunks(ctx, keyRange{}, func(rows []store.Row) error {
		states := make([]*layout.State, len(rows))
		naming := make([]bool, len(rows))
		err := forEachIndex(n, len(rows), func(_, k int) error {
			var err error
			if states[k], err = layout.ReadStateSkipping(j.sp, j.ent, j.prim, rows[k], layout.SkipPending); err != nil {
				return fmt.Errorf("reconcile: %w", err)
			}
			naming[k] = bs.names(j, states[k].Counted)
			return nil
		})
		if err != nil {
			return err
		}
		// Only a record the group's rows count is worth the reads that
		// tell a moved entity's leftover.
		old, err := j.superseded(ctx, bs, rows, states, naming)
		if err != nil {
			return err
		}
		err = forEachIndex(n, len(rows), func(g, k int) error {
			row, state := rows[k], states[k]
			if naming[k] && !old[k] {
				bs.count(j, state)
			}
			bs.met(state.Counted)
			if naming[k] && bs.movedLately(state.MovedAt) {
				bs.unsureOf(j, state.Counted)
			}
			if !state.Exists() {
				return nil
			}
			d, err := layout.DeriveCopies(j.sp, j.ent, state.Values)
			if err != nil {
				return fmt.Errorf("reconcile: %s row %s: %w", j.prim.Name, store.Printable(row.Key), err)
			}
			// A live row a move left behind is not re-recorded: its
			// entity's newest record is in another row.
			if len(bs.in) > 0 && !old[k] {
				if counts, missing, stale := recount(state, d.Increments, covered, bs.share); len(counts) > 0 {
					adopts[g] = append(adopts[g], newAdoption(row, state, book, counts, missing, stale))
				}
			}
			for _, it := range j.unexpired(d.Items, state.Version) {
				if ti, ri, ok := j.slotOf(it.Table, it.Row); ok && keeps(ti, ri, it.Row, it.Qualifier) {
					// A clone: the row's bytes belong to the chunk.
					items[g] = append(items[g], &expect{item: it, v: state.Version, pk: bytes.Clone(row.Key)})
				}
			}
			for _, inc := range d.Increments {
				if inc.Bounded {
					continue // counted from the records, above
				}
				if ti, ri, ok := j.slotOf(inc.Table, inc.Row); ok && keeps(ti, ri, inc.Row, inc.Qualifier) {
					incs[g] = append(incs[g], inc)
				}
			}
			return nil
		})
		for g := range items {
			for _, e := range items[g] {
				want[e.item.ID()] = e
				if e.item.Family != "" {
					if ek, ok := contributionKey(e.item.Qualifier); ok {
						ents[string(ek)] = e.pk
					}
				}
			}
			for _, inc := range incs[g] {
				ref := layout.Ref{Table: inc.Table, Row: inc.Row, Family: inc.Family, Qualifier: inc.Qualifier}
				fs := sums[ref.ID()]
				if fs == nil {
					fs = &fastSum{Ref: ref}
					sums[ref.ID()] = fs
				}
				fs.Sum += inc.Delta
			}
			items[g], incs[g] = items[g][:0], incs[g][:0]
		}
		if err != nil {
			return err
		}
		for g := range adopts {
			for _, a := range adopts[g] {
				if err := j.adopt(ctx, rep, a); err != nil {
					return err
				}
			}
			adopts[g] = adopts[g][:0]
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := j.diffBounded(ctx, rep, bs); err != nil {
		return err
	}
	var unknown []unknownContribution
	for _, tg := range group {
		if j.derived[tg.ti].bounded() {
			continue // diffBounded did it
		}
		if err := j.diffRange(ctx, rep, tg, want, sums, ents, &unknown); err != nil {
			return err
		}
	}
	// Kept copies the scans did not meet: missing, or written since the
	// scan passed their key. In key order, for reproducible repairs.
	ids := make([]string, 0, len(want))
	for id, e := range want {
		if !e.done {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := want[id]
		e.done = true
		if err := j.item(ctx, rep, e.item, e.v); err != nil {
			return err
		}
	}
	// Fast totals the store lacks.
	ids = ids[:0]
	for id := range sums {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fs := sums[id]
		if fs.Sum == 0 {
			continue
		}
		rep.Kinds[KindCounter].Drifted++
		m := store.Mutation{Kind: store.Put, Family: fs.Family, Qualifier: fs.Qualifier, Timestamp: store.LatestTimestamp, Value: layout.Int64Cell(fs.Sum)}
		if err := j.setCounter(ctx, rep, fs.Table, fs.Row, store.Condition{Family: fs.Family, Qualifier: fs.Qualifier, Absent: true}, m); err != nil {
			return err
		}
	}
	return j.resolveUnknown(ctx, rep, unknown)
}

// diffRange scans one unequal range and compares each row with the copies
// kept for it.
func (j *job) diffRange(ctx context.Context, rep *Report, tg target, want map[string]*expect, sums map[string]*fastSum, ents map[string][]byte, unknown *[]unknownContribution) error {
	d := j.derived[tg.ti]
	t := d.t
	r := bounds(d.splits, tg.ri)
	sc, err := j.st.Scan(ctx, t.Name, store.Scan{Start: r.Start, Stop: r.Stop, Caching: 1000})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", t.Name, err)
	}
	defer sc.Close()
	c := rep.Kinds[d.kind]
	for sc.Next(ctx) {
		if d.counter() && !j.win.covers(t.Name, sc.Row().Key) {
			continue
		}
		if !d.counter() && !tg.has(sc.Row().Key, nil) {
			continue
		}
		row := copyRow(sc.Row())
		switch {
		case d.fast:
			for _, cell := range row.Cells {
				if !tg.has(row.Key, cell.Qualifier) {
					continue
				}
				id := layout.Ref{Table: t.Name, Row: row.Key, Family: cell.Family, Qualifier: cell.Qualifier}.ID()
				var total int64
				if fs := sums[id]; fs != nil {
					total = fs.Sum
					delete(sums, id)
				}
				if got, err := layout.CellInt64(cell.Value); err == nil && got == total {
					c.Valid++
					continue
				}
				c.Drifted++
				m := store.Mutation{Kind: store.Put, Family: cell.Family, Qualifier: cell.Qualifier, Timestamp: cell.Timestamp + 1, Value: layout.Int64Cell(total)}
				if err := j.setCounter(ctx, rep, t.Name, row.Key, store.Condition{Family: cell.Family, Qualifier: cell.Qualifier, Value: cell.Value}, m); err != nil {
					return err
				}
			}
		case d.exact:
			for _, cell := range row.Cells {
				if !tg.has(row.Key, cell.Qualifier) {
					continue
				}
				ek, ok := contributionKey(cell.Qualifier)
				ref := layout.Ref{Table: t.Name, Row: row.Key, Family: cell.Family, Qualifier: cell.Qualifier}
				if !ok {
					if bareTotal(t, cell) { // no entity's: an orphan whatever the primary rows hold
						if err := j.orphan(ctx, rep, KindCounter, ref, nil, cell.Timestamp, deleteCell(cell)); err != nil {
							return err
						}
					}
					continue
				}
				if e := want[ref.ID()]; e != nil {
					if !e.done {
						e.done = true
						if err := j.check(ctx, rep, e.item, e.v, store.Row{Key: row.Key, Cells: []store.Cell{cell}}); err != nil {
							return err
						}
					}
					continue
				}
				pk, known := ents[string(ek)]
				if !known {
					// Its entity's primary row was not in the scan: it may
					// have been written after the scan passed its key.
					*unknown = append(*unknown, unknownContribution{ref: ref, ek: string(ek), ts: cell.Timestamp})
					continue
				}
				if err := j.orphan(ctx, rep, KindCounter, ref, pk, cell.Timestamp, deleteCell(cell)); err != nil {
					return err
				}
			}
		default:
			if e := want[layout.Ref{Table: t.Name, Row: row.Key}.ID()]; e != nil {
				if !e.done {
					e.done = true
					if err := j.check(ctx, rep, e.item, e.v, row); err != nil {
						return err
					}
				}
				continue
			}
			if err := j.orphanRow(ctx, rep, d, row); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", t.Name, err)
	}
	return nil
}

// orphanRow checks an index or lookup row that no kept copy matches: an
// orphan when the primary row its ref cell names does not derive it. A row
// without a ref cell cannot be traced to an entity and is left alone, as
// is a lookup table's reference row.
func (j *job) orphanRow(ctx context.Context, rep *Report, d *derivedTable, row store.Row) error {
	t := d.t
	var newest int64
	derived := false
	for _, c := range row.Cells {
		if d.kind == KindLookup && notDerived(c.Qualifier) {
			continue
		}
		derived = true
		newest = max(newest, c.Timestamp)
	}
	if !derived || t.Ref == nil {
		return nil
	}
	ref, ok := row.Latest(t.Ref.Family, []byte(schema.RefQualifier))
	if !ok {
		return nil
	}
	var ms []store.Mutation
	for _, f := range t.Families {
		ms = append(ms, store.Mutation{Kind: store.DeleteFamily, Family: f.Name, Timestamp: newest})
	}
	return j.orphan(ctx, rep, d.kind, layout.Ref{Table: t.Name, Row: row.Key}, ref.Value, newest, ms)
}

func deleteCell(c store.Cell) []store.Mutation {
	return []store.Mutation{{Kind: store.DeleteColumn, Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp}}
}

// resolveUnknown scans the primary table again for the entities of
// contributions the re-derivation did not meet. The writer writes a
// primary row before its contributions, so an entity absent from this
// later scan has no primary row, and its contributions are orphans.
//
// An entity that moved (a change of a primary-key field) can have a row at
// each key it held, all but one under a tombstone: its contributions are
// judged by the row of its newest version. Judged by an older row, whose
// version is below the contribution's, one its current state no longer
// derives would pass for a write in flight and stay.
func (j *job) resolveUnknown(ctx context.Context, rep *Report, unknown []unknownContribution) error {
	if len(unknown) == 0 {
		return nil
	}
	type found struct {
		pk []byte
		v  int64 // the state's version in row pk
	}
	pks := map[string]*found{}
	for _, u := range unknown {
		pks[u.ek] = nil
	}
	sc, err := j.st.Scan(ctx, j.prim.Name, store.Scan{Caching: checkpointEvery})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	for sc.Next(ctx) {
		row := sc.Row()
		ek, err := j.entityKey(row.Key)
		if err != nil {
			continue
		}
		f, ok := pks[string(ek)]
		if !ok {
			continue
		}
		state, err := layout.ReadStateSkipping(j.sp, j.ent, j.prim, row, layout.SkipBookkeeping)
		if err != nil {
			sc.Close()
			return fmt.Errorf("reconcile: %w", err)
		}
		if f == nil || state.Version > f.v {
			pks[string(ek)] = &found{pk: bytes.Clone(row.Key), v: state.Version}
		}
	}
	err = sc.Err()
	sc.Close()
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	slices.SortFunc(unknown, func(a, b unknownContribution) int { return strings.Compare(a.ref.ID(), b.ref.ID()) })
	for _, u := range unknown {
		var pk []byte
		if f := pks[u.ek]; f != nil {
			pk = f.pk
		}
		ms := []store.Mutation{{Kind: store.DeleteColumn, Family: u.ref.Family, Qualifier: u.ref.Qualifier, Timestamp: u.ts}}
		if err := j.orphan(ctx, rep, KindCounter, u.ref, pk, u.ts, ms); err != nil {
			return err
		}
	}
	return nil
}
