package reconcile

import (
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// counters checks a counter table against every primary row: exact-mode
// contributions no state derives are orphans; fast-mode totals are compared
// with the recomputed sums. Only a run over the whole table calls it.
func (j *job) counters(ctx context.Context, t *schema.Table) error {
	sc, err := j.st.Scan(ctx, t.Name, store.Scan{})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", t.Name, err)
	}
	defer sc.Close()
	exact := t.Counter.Mode == schema.CounterExact
	c := j.rep.Kinds[KindCounter]
	for sc.Next(ctx) {
		if !j.win.covers(t.Name, sc.Row().Key) {
			continue // outside the window: neither checked nor repaired
		}
		row := copyRow(sc.Row())
		for _, cell := range row.Cells {
			id := cellID(t.Name, row.Key, cell.Family, cell.Qualifier)
			if exact {
				if e := j.derived[id]; e != nil {
					if !e.done {
						e.done = true
						got := store.Row{Key: row.Key, Cells: []store.Cell{cell}}
						if err := j.check(ctx, e.item, e.v, got); err != nil {
							return err
						}
					}
					continue
				}
				if err := j.contribution(ctx, c, t, row.Key, cell, id); err != nil {
					return err
				}
				continue
			}
			var want int64
			fs, seen := j.sums[id]
			if seen {
				want = fs.Sum
			}
			delete(j.sums, id)
			got, err := layout.CellInt64(cell.Value)
			if err == nil && got == want && seen {
				c.Valid++
				continue
			}
			c.Drifted++
			// Set only if the cell still holds what was read: an increment
			// in between makes the set fail instead of being lost.
			m := store.Mutation{Kind: store.Put, Family: cell.Family, Qualifier: cell.Qualifier, Timestamp: cell.Timestamp + 1, Value: layout.Int64Cell(want)}
			if err := j.setCounter(ctx, c, t.Name, row.Key, store.Condition{Family: cell.Family, Qualifier: cell.Qualifier, Value: cell.Value}, m); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", t.Name, err)
	}
	if exact {
		return j.checkUnmet(ctx, t.Name)
	}
	// Counter cells the sums have and the store lacks.
	for _, fs := range j.sums {
		ref, want := fs.Ref, fs.Sum
		if ref.Table != t.Name || want == 0 {
			continue
		}
		c.Drifted++
		m := store.Mutation{Kind: store.Put, Family: ref.Family, Qualifier: ref.Qualifier, Timestamp: store.LatestTimestamp, Value: layout.Int64Cell(want)}
		if err := j.setCounter(ctx, c, t.Name, ref.Row, store.Condition{Family: ref.Family, Qualifier: ref.Qualifier, Absent: true}, m); err != nil {
			return err
		}
	}
	return nil
}

func (j *job) setCounter(ctx context.Context, c *Counts, table string, row []byte, cond store.Condition, m store.Mutation) error {
	if j.opts.DryRun {
		return nil
	}
	ok, err := j.st.CheckAndMutate(ctx, table, cond, store.RowMutation{Row: row, Mutations: []store.Mutation{m}})
	if err != nil || !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.Failed++
		return nil
	}
	c.Repaired++
	return nil
}

// contribution checks one exact-mode contribution cell that the primary
// pass may not have derived.
func (j *job) contribution(ctx context.Context, c *Counts, t *schema.Table, row []byte, cell store.Cell, id string) error {
	ek, ok := contributionKey(cell.Qualifier)
	if !ok {
		return nil // not a contribution: a folded total, left alone
	}
	ref := layout.Ref{Table: t.Name, Row: row, Family: cell.Family, Qualifier: cell.Qualifier}
	pk, known := j.entities[string(ek)]
	if !known {
		// The entity's primary row was not in the scan: it may have been
		// written after the scan passed its key. Decide after a rescan.
		j.unknown = append(j.unknown, unknownContribution{ref: ref, ek: string(ek), ts: cell.Timestamp})
		return nil
	}
	return j.contributionOf(ctx, c, ref, pk, cell.Timestamp)
}

// unknownContribution is a contribution whose entity the primary pass did
// not see.
type unknownContribution struct {
	ref layout.Ref
	ek  string
	ts  int64
}

// contributionOf checks a contribution not derived by the primary pass
// against its entity's primary row pk (nil: no such row), reading the row
// again before a delete. The delete is at the contribution's own timestamp.
func (j *job) contributionOf(ctx context.Context, c *Counts, ref layout.Ref, pk []byte, ts int64) error {
	check := func() (bool, error) {
		if pk == nil {
			return true, nil
		}
		return j.isOrphan(ctx, ref.Table, ref.Row, pk, ts, ref)
	}
	orphan, err := check()
	if err != nil || !orphan {
		return err
	}
	c.Orphaned++
	if j.opts.DryRun {
		return nil
	}
	if orphan, err = check(); err != nil || !orphan {
		return err
	}
	return j.repair(ctx, c, ref.Table, ref.Row, []store.Mutation{{Kind: store.DeleteColumn, Family: ref.Family, Qualifier: ref.Qualifier, Timestamp: ts}})
}

// resolveUnknown scans the primary table again for the entities of
// contributions the first pass did not see. The writer writes a primary row
// before its contributions, so an entity absent from this later scan has
// no primary row, and its contributions are orphans.
func (j *job) resolveUnknown(ctx context.Context) error {
	if len(j.unknown) == 0 {
		return nil
	}
	want := map[string][]byte{}
	for _, u := range j.unknown {
		want[u.ek] = nil
	}
	sc, err := j.st.Scan(ctx, j.prim.Name, store.Scan{})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	defer sc.Close()
	for sc.Next(ctx) {
		if ek, err := j.entityKey(sc.Row().Key); err == nil {
			if _, ok := want[string(ek)]; ok {
				want[string(ek)] = append([]byte(nil), sc.Row().Key...)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	c := j.rep.Kinds[KindCounter]
	for _, u := range j.unknown {
		if err := j.contributionOf(ctx, c, u.ref, want[u.ek], u.ts); err != nil {
			return err
		}
	}
	j.unknown = nil
	return nil
}
