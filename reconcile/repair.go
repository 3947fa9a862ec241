package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// Every repair is read back. A put at a timestamp a delete marker covers
// (one `denorm delete` left, with or without --ts, or the writer's own
// delete at version-1 of an entity moved back) is accepted by the store and
// stays invisible until a major compaction purges the marker: such a repair
// is counted failed with its cause, not repaired, so the run exits 1. With
// Options.PurgeMarkers the job then major-compacts the table (once per run)
// and repairs again.

// fixer holds what a run's repairs share: which tables it compacted.
type fixer struct {
	mu        sync.Mutex
	compacted map[string]bool
}

func newFixer() *fixer { return &fixer{compacted: map[string]bool{}} }

// fix applies one row's repair mutations unless the run is dry, and reads
// them back.
func (j *job) fix(ctx context.Context, rep *Report, kind, table string, row []byte, ms []store.Mutation) error {
	if j.opts.DryRun || len(ms) == 0 {
		return nil
	}
	c := rep.Kinds[kind]
	for attempt := 0; ; attempt++ {
		if err := j.st.Mutate(ctx, table, store.RowMutation{Row: row, Mutations: ms}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.fail(kind, table, row, fmt.Sprintf("the store refused the repair: %v", err))
			return nil
		}
		if attempt == 0 {
			c.Repaired += int64(len(ms))
		}
		cause, err := j.readBack(ctx, table, row, ms)
		if err != nil {
			return err
		}
		if cause == "" {
			c.Fixed++
			return nil
		}
		if attempt > 0 || !j.opts.PurgeMarkers {
			rep.fail(kind, table, row, cause)
			return nil
		}
		if err := j.purge(ctx, table); err != nil {
			return err
		}
	}
}

// purge major-compacts a table once per run, purging its delete markers.
func (j *job) purge(ctx context.Context, table string) error {
	j.fixes.mu.Lock()
	defer j.fixes.mu.Unlock()
	if j.fixes.compacted[table] {
		return nil
	}
	j.fixes.compacted[table] = true
	if err := j.st.MajorCompact(ctx, table); err != nil {
		return fmt.Errorf("reconcile: purge markers of %s: %w", table, err)
	}
	return nil
}

// readBack reads the row again and says why the mutations did not take
// effect ("" when they did). A cell newer than a repair's timestamp means a
// newer write has landed, which owns the cell: that is not a failure.
func (j *job) readBack(ctx context.Context, table string, row []byte, ms []store.Mutation) (string, error) {
	got, err := j.st.Get(ctx, table, store.Get{Row: row})
	if err != nil {
		return "", fmt.Errorf("reconcile: read back %s row %s: %w", table, store.Printable(row), err)
	}
	for _, m := range ms {
		switch m.Kind {
		case store.Put:
			c, ok := got.Latest(m.Family, m.Qualifier)
			if ok && c.Timestamp > m.Timestamp {
				continue
			}
			if !ok || c.Timestamp < m.Timestamp || !bytes.Equal(c.Value, m.Value) {
				return fmt.Sprintf("put %s:%s at ts %d is not visible: masked by a delete marker at ts %d or later", m.Family, store.Printable(m.Qualifier), m.Timestamp, m.Timestamp), nil
			}
		case store.DeleteColumn:
			if c, ok := got.Latest(m.Family, m.Qualifier); ok && c.Timestamp <= m.Timestamp {
				return fmt.Sprintf("delete of %s:%s at ts %d did not take effect", m.Family, store.Printable(m.Qualifier), m.Timestamp), nil
			}
		case store.DeleteFamily:
			for _, c := range got.Cells {
				if c.Family == m.Family && c.Timestamp <= m.Timestamp {
					return fmt.Sprintf("delete of family %s at ts %d did not take effect", m.Family, m.Timestamp), nil
				}
			}
		}
	}
	return "", nil
}

// setCounter sets a fast-mode total with a CheckAndMutate on the value the
// job read, so that an increment landing in between makes the set fail
// rather than be lost (the next run recomputes it), then reads it back.
func (j *job) setCounter(ctx context.Context, rep *Report, table string, row []byte, cond store.Condition, m store.Mutation) error {
	if j.opts.DryRun {
		return nil
	}
	c := rep.Kinds[KindCounter]
	ok, err := j.st.CheckAndMutate(ctx, table, cond, store.RowMutation{Row: row, Mutations: []store.Mutation{m}})
	if err != nil || !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cause := "the total changed since it was read"
		if err != nil {
			cause = fmt.Sprintf("the store refused the repair: %v", err)
		}
		rep.fail(KindCounter, table, row, cause)
		return nil
	}
	c.Repaired++
	got, err := j.st.Get(ctx, table, store.Get{Row: row, Columns: []store.Column{{Family: m.Family, Qualifier: m.Qualifier}}})
	if err != nil {
		return fmt.Errorf("reconcile: read back %s row %s: %w", table, store.Printable(row), err)
	}
	cell, ok := got.Latest(m.Family, m.Qualifier)
	want, _ := layout.CellInt64(m.Value)
	have, herr := layout.CellInt64(cell.Value)
	switch {
	case ok && herr == nil && have == want:
		c.Fixed++
	case want == 0 && !ok:
		c.Fixed++
	case ok && m.Timestamp != store.LatestTimestamp && cell.Timestamp > m.Timestamp:
		// an increment landed after the set: the next run checks it
	default:
		rep.fail(KindCounter, table, row, fmt.Sprintf("total %d at ts %d is not visible: masked by a delete marker", want, m.Timestamp))
	}
	return nil
}
