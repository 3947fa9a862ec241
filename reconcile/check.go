package reconcile

import (
	"bytes"
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// expect is a derived row (or contribution) the re-derivation expects, with
// its entity's version and primary row; done once compared.
type expect struct {
	item layout.Item
	v    int64
	pk   []byte
	done bool
}

// item reads one derived row (or counter contribution) and compares it.
func (j *job) item(ctx context.Context, rep *Report, it layout.Item, v int64) error {
	g := store.Get{Row: it.Row}
	if it.Family != "" {
		g.Columns = []store.Column{{Family: it.Family, Qualifier: it.Qualifier}}
	}
	got, err := j.st.Get(ctx, it.Table, g)
	if err != nil {
		return fmt.Errorf("reconcile: get %s row %s: %w", it.Table, store.Printable(it.Row), err)
	}
	return j.check(ctx, rep, it, v, got)
}

// check compares a derived row (or contribution) with what the store holds
// and repairs it at the entity's version v: missing and differing cells
// are put at v, cells no state derives deleted at their own timestamp.
func (j *job) check(ctx context.Context, rep *Report, it layout.Item, v int64, got store.Row) error {
	kind := j.derived[j.byName[it.Table]].kind
	c := rep.Kinds[kind]
	var ms []store.Mutation
	matched := 0
	lookup := kind == KindLookup
	for _, sc := range got.Cells {
		if lookup && notDerived(sc.Qualifier) {
			continue
		}
		if sc.Timestamp > v {
			c.Valid++ // a newer write is in flight; it owns the row
			return nil
		}
		want, ok := findCell(it.Cells, sc.Family, sc.Qualifier)
		switch {
		case !ok:
			ms = append(ms, store.Mutation{Kind: store.DeleteColumn, Family: sc.Family, Qualifier: sc.Qualifier, Timestamp: sc.Timestamp})
		case !bytes.Equal(want.Value, sc.Value):
			ms = append(ms, put(want, v))
		default:
			matched++
		}
	}
	if matched == 0 && len(ms) == 0 {
		c.Missing++
	} else if len(ms) == 0 && matched == len(it.Cells) {
		c.Valid++
		return nil
	} else {
		c.Stale++
	}
	for _, w := range it.Cells {
		if _, ok := got.Latest(w.Family, w.Qualifier); !ok {
			ms = append(ms, put(w, v))
		}
	}
	return j.fix(ctx, rep, kind, it.Table, it.Row, ms)
}

func put(c layout.Cell, ts int64) store.Mutation {
	return store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: ts, Value: c.Value}
}

func findCell(cells []layout.Cell, fam string, q []byte) (layout.Cell, bool) {
	for _, c := range cells {
		if c.Family == fam && bytes.Equal(c.Qualifier, q) {
			return c, true
		}
	}
	return layout.Cell{}, false
}

// readState reads the primary row pk and its state, skipping skip.
func (j *job) readState(ctx context.Context, pk []byte, skip layout.Skip) (*layout.State, error) {
	row, err := j.st.Get(ctx, j.prim.Name, store.Get{Row: pk})
	if err != nil {
		return nil, fmt.Errorf("reconcile: get %s row %s: %w", j.prim.Name, store.Printable(pk), err)
	}
	st, err := layout.ReadStateSkipping(j.sp, j.ent, j.prim, row, skip)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	return st, nil
}

// isOrphan reads the primary row pk and reports whether its state, which
// must be at least as new as the derived row (newest), no longer derives
// want (a row, or with a qualifier a counter contribution).
func (j *job) isOrphan(ctx context.Context, want layout.Ref, pk []byte, newest int64) (bool, error) {
	state, err := j.readState(ctx, pk, layout.SkipPending)
	if err != nil {
		return false, err
	}
	if !state.Exists() && state.Version > 0 {
		if state, err = j.movedTo(ctx, pk, state); err != nil {
			return false, err
		}
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
	d, err := layout.DeriveCopies(j.sp, j.ent, state.Values)
	if err != nil {
		return false, fmt.Errorf("reconcile: %s row %s: %w", j.prim.Name, store.Printable(pk), err)
	}
	for _, it := range d.Items {
		if it.Ref.Compare(want) == 0 {
			return false, nil
		}
	}
	return true, nil
}

// movedTo is the state to judge a derived copy by when the primary row
// pk holds a tombstone (state): a move empties the row it leaves with a
// tombstone at the move's version, which deletes nothing of the entity,
// so the entity's newest state among the rows its locator lists (a live
// one on a tie: the row moved to, at the same version) is the one that
// says what it derives. The scan may have met the entity in pk before
// the move, which is how a copy of the row moved to comes to be judged by
// pk: a contribution names its entity, not a row. Without a locator the
// entity cannot move, and the tombstone is a delete.
func (j *job) movedTo(ctx context.Context, pk []byte, state *layout.State) (*layout.State, error) {
	if j.loc == nil {
		return state, nil
	}
	g, err := j.locatorGet(pk)
	if err != nil {
		return nil, err
	}
	row, err := j.st.Get(ctx, j.loc.Name, g)
	if err != nil {
		return nil, fmt.Errorf("reconcile: read %s row %s: %w", j.loc.Name, store.Printable(g.Row), err)
	}
	at, _ := layout.ReadLocation(j.loc, row)
	for _, x := range at {
		if bytes.Equal(x.Key, pk) {
			continue
		}
		s, err := j.readState(ctx, x.Key, layout.SkipPending)
		if err != nil {
			return nil, err
		}
		if s.Version > state.Version || s.Version == state.Version && s.Exists() && !state.Exists() {
			state = s
		}
	}
	return state, nil
}

// orphan counts a derived row or contribution that the primary row pk
// (nil: none) does not derive, and deletes it with ms after reading the
// primary row once more: a write made since may derive it again. The
// deletes are at the orphan's own newest timestamp, so a later write of the
// same row, at a higher version, survives them.
func (j *job) orphan(ctx context.Context, rep *Report, kind string, want layout.Ref, pk []byte, newest int64, ms []store.Mutation) error {
	check := func() (bool, error) {
		if pk == nil {
			return true, nil
		}
		return j.isOrphan(ctx, want, pk, newest)
	}
	orphan, err := check()
	if err != nil || !orphan {
		return err
	}
	rep.Kinds[kind].Orphaned++
	if j.opts.DryRun {
		return nil
	}
	if orphan, err = check(); err != nil || !orphan {
		return err
	}
	return j.fix(ctx, rep, kind, want.Table, want.Row, ms)
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

// entityKey decodes the entity key from a primary row key.
func (j *job) entityKey(pk []byte) ([]byte, error) {
	vals, err := j.prim.Key.DecodeValues(pk)
	if err != nil {
		return nil, err
	}
	return layout.EntityKey(j.ent, vals)
}
