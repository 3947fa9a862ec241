package reconcile

import (
	"bytes"
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// scanDerived scans an index or lookup table once: rows the primary pass
// derived are compared with it (those the scan does not meet are read with
// a Get, to tell missing from written meanwhile); other rows whose ref cell
// names a primary row in this run's ranges that is gone, deleted, or no
// longer derives them are orphans, deleted at their own newest timestamp.
func (j *job) scanDerived(ctx context.Context, t *schema.Table) error {
	if err := j.scanTable(ctx, t); err != nil {
		return err
	}
	return j.checkUnmet(ctx, t.Name)
}

// checkUnmet reads again, one Get each, the derived rows (or contributions)
// of table that its scan did not meet: missing, or written since the scan
// passed their key.
func (j *job) checkUnmet(ctx context.Context, table string) error {
	for _, e := range j.derived {
		if e.item.Table != table || e.done {
			continue
		}
		e.done = true
		if err := j.item(ctx, e.item, e.v); err != nil {
			return err
		}
	}
	return nil
}

func (j *job) scanTable(ctx context.Context, t *schema.Table) error {
	sc, err := j.st.Scan(ctx, t.Name, store.Scan{})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", t.Name, err)
	}
	defer sc.Close()
	c := j.kind(t.Name)
	for sc.Next(ctx) {
		row := sc.Row()
		if e := j.derived[layout.Ref{Table: t.Name, Row: row.Key}.ID()]; e != nil {
			if !e.done {
				e.done = true
				if err := j.check(ctx, e.item, e.v, copyRow(row)); err != nil {
					return err
				}
			}
			continue
		}
		if t.Ref == nil {
			continue
		}
		ref, ok := row.Latest(t.Ref.Family, []byte(schema.RefQualifier))
		if !ok || !j.mine(ref.Value) {
			continue // a reference row of a lookup table, or another shard's
		}
		row = copyRow(row)
		pk := append([]byte(nil), ref.Value...)
		newest := newestTimestamp(row)
		orphan, err := j.isOrphan(ctx, t.Name, row.Key, pk, newest)
		if err != nil {
			return err
		}
		if !orphan {
			continue
		}
		c.Orphaned++
		if j.opts.DryRun {
			continue
		}
		// Read the primary row again just before the delete: a write made
		// since the first read may derive the row again.
		if orphan, err = j.isOrphan(ctx, t.Name, row.Key, pk, newest); err != nil {
			return err
		}
		if !orphan {
			continue
		}
		var ms []store.Mutation
		for _, f := range t.Families {
			ms = append(ms, store.Mutation{Kind: store.DeleteFamily, Family: f.Name, Timestamp: newest})
		}
		if err := j.repair(ctx, c, t.Name, row.Key, ms); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", t.Name, err)
	}
	return nil
}

// mine reports whether a primary key falls in this run's ranges.
func (j *job) mine(pk []byte) bool {
	for _, r := range j.ranges {
		if r.contains(pk) {
			return true
		}
	}
	return false
}

// isOrphan reads the primary row pk and reports whether its state, which
// must be at least as new as the derived row (newest), no longer derives
// the row (or, with a qualifier, the counter contribution) of table.
func (j *job) isOrphan(ctx context.Context, table string, row, pk []byte, newest int64, qual ...layout.Ref) (bool, error) {
	prow, err := j.st.Get(ctx, j.prim.Name, store.Get{Row: pk})
	if err != nil {
		return false, fmt.Errorf("reconcile: get %s row %s: %w", j.prim.Name, store.Printable(pk), err)
	}
	state, err := layout.ReadState(j.plan, j.ent, j.prim, prow)
	if err != nil {
		return false, fmt.Errorf("reconcile: %w", err)
	}
	if state.Version == 0 {
		return true, nil // the primary row is gone
	}
	if state.Version < newest {
		// The derived row is newer than the primary row: the writer writes
		// primary rows first, so this is not the writer's doing; leave it.
		return false, nil
	}
	if !state.Exists() {
		return true, nil
	}
	d, err := layout.DeriveCopies(j.plan, j.ent, state.Values)
	if err != nil {
		return false, fmt.Errorf("reconcile: %s row %s: %w", j.prim.Name, store.Printable(pk), err)
	}
	want := layout.Ref{Table: table, Row: row}
	if len(qual) > 0 {
		want = qual[0]
	}
	for _, it := range d.Items {
		if it.Ref.Compare(want) == 0 {
			return false, nil
		}
	}
	return true, nil
}

func newestTimestamp(r store.Row) int64 {
	var ts int64
	for _, c := range r.Cells {
		ts = max(ts, c.Timestamp)
	}
	return ts
}

// contributionKey is the entity key in an exact-mode contribution's
// qualifier (<qualifier> 0x00 <entity key>).
func contributionKey(q []byte) ([]byte, bool) {
	i := bytes.IndexByte(q, 0)
	if i < 0 {
		return nil, false
	}
	return q[i+1:], true
}
