package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Options say what a run covers and whether it repairs.
type Options struct {
	// Table is the primary table to reconcile; "" means every primary table.
	Table string
	// Start and Stop bound the primary keys, [Start, Stop); nil means the
	// whole table.
	Start, Stop []byte
	// Shard, when N > 1, restricts the run to the regions of one shard.
	Shard Shard
	// DryRun reports differences without repairing them.
	DryRun bool
	// Since, when set, limits the counter check to counter rows whose key's
	// time part is at or after it (see window.go); index, lookup and live
	// copies are checked whole.
	Since time.Time
	// Checkpoint is a file holding the last primary key done; "" for none.
	Checkpoint string
	// Progress, when set, is called with the primary rows scanned so far.
	// Workers is how many goroutines check entities; 0 means 4.
	Workers  int
	Progress func(rows int64)
}

// checkpointEvery is how many primary rows a chunk holds: the checkpoint
// is written after each chunk.
const checkpointEvery = 1000

// Run reconciles the copies of the primary tables of plan in st.
func Run(ctx context.Context, plan *schema.Plan, st store.Store, opts Options) (*Report, error) {
	rep := newReport(opts.DryRun)
	found := false
	for _, ent := range plan.Entities {
		prim := plan.Primary(ent.Name)
		if prim == nil || (opts.Table != "" && prim.Name != opts.Table) {
			continue
		}
		found = true
		j := &job{plan: plan, st: st, ent: ent, prim: prim, opts: opts, rep: rep}
		if err := j.run(ctx); err != nil {
			return rep, err
		}
	}
	if opts.Table != "" && !found {
		return rep, fmt.Errorf("reconcile: %s is not a primary table of the schema", opts.Table)
	}
	// Finished: the next run starts from the beginning.
	if err := removeCheckpoint(opts.Checkpoint); err != nil {
		return rep, err
	}
	return rep, nil
}

// job reconciles one primary table.
type job struct {
	plan *schema.Plan
	st   store.Store
	ent  *schema.Entity
	prim *schema.Table
	opts Options
	rep  *Report

	ranges []keyRange
	// whole: the run covers every primary row, so counter rows can be
	// recomputed from all their contributors.
	whole bool
	// sums holds the fast-mode totals per counter cell; entities maps an
	// entity key to its primary row key. Kept only when whole.
	// derived holds the index and lookup rows the primary pass derived (and,
	// when whole, the exact-mode contributions), by Ref ID, to compare when
	// their table is scanned: memory grows with the derived rows of the
	// range.
	derived map[string]*expect
	// pending holds what entity derived since the last chunk: a fork
	// collects in a slice, and the chunk's end files it in derived once.
	pending  []*expect
	sums     map[string]*fastSum
	entities map[string][]byte
	// unknown holds contributions of entities the primary pass did not see.
	unknown []unknownContribution
	// refs caches the lookup tables' reference rows, shared by forks.
	refs *refCache
	// win says which counter rows the run checks.
	win *window
}

func (j *job) run(ctx context.Context) error {
	var err error
	if j.ranges, err = ranges(ctx, j.st, j.prim.Name, j.opts.Start, j.opts.Stop, j.opts.Shard); err != nil {
		return err
	}
	resume, err := readCheckpoint(j.opts.Checkpoint, j.prim.Name)
	if err != nil {
		return err
	}
	j.derived = map[string]*expect{}
	j.refs = &refCache{rows: map[string]store.Row{}}
	j.win = newWindow(j.plan, j.opts.Since)
	j.whole = j.opts.Shard.N <= 1 && len(j.opts.Start) == 0 && len(j.opts.Stop) == 0 && resume == nil
	if j.whole {
		j.sums, j.entities = map[string]*fastSum{}, map[string][]byte{}
	}
	for _, r := range j.ranges {
		if resume != nil {
			if len(r.Stop) > 0 && bytes.Compare(resume, r.Stop) >= 0 {
				continue // done before the interruption
			}
			if bytes.Compare(resume, r.Start) >= 0 {
				r.Start = append(append([]byte(nil), resume...), 0)
			}
		}
		if err := j.scanPrimary(ctx, r); err != nil {
			return err
		}
	}
	for _, t := range j.plan.TablesOf(j.ent.Name) {
		switch {
		case t.Role == schema.RoleIndex || t.Role == schema.RoleLookup:
			if err := j.scanDerived(ctx, t); err != nil {
				return err
			}
		case t.Role == schema.RoleCounter && j.whole:
			if err := j.counters(ctx, t); err != nil {
				return err
			}
		}
	}
	return j.resolveUnknown(ctx)
}

func (j *job) scanPrimary(ctx context.Context, r keyRange) error {
	sc, err := j.st.Scan(ctx, j.prim.Name, store.Scan{Start: r.Start, Stop: r.Stop})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	defer sc.Close()
	var last []byte
	chunk := make([]store.Row, 0, checkpointEvery)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := j.checkChunk(ctx, chunk); err != nil {
			return err
		}
		j.rep.Rows += int64(len(chunk))
		last = chunk[len(chunk)-1].Key
		chunk = chunk[:0]
		if err := writeCheckpoint(j.opts.Checkpoint, j.prim.Name, last); err != nil {
			return err
		}
		if j.opts.Progress != nil {
			j.opts.Progress(j.rep.Rows)
		}
		return nil
	}
	for sc.Next(ctx) {
		chunk = append(chunk, copyRow(sc.Row()))
		if len(chunk) == checkpointEvery {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	return flush()
}

// entity checks every copy one primary row derives.
func (j *job) entity(ctx context.Context, row store.Row) error {
	state, err := layout.ReadState(j.plan, j.ent, j.prim, row)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if j.whole {
		if ek, err := j.entityKey(row.Key); err == nil {
			j.entities[string(ek)] = row.Key
		}
	}
	if !state.Exists() {
		return nil
	}
	d, err := layout.DeriveCopies(j.plan, j.ent, state.Values)
	if err != nil {
		return fmt.Errorf("reconcile: %s row %s: %w", j.prim.Name, store.Printable(row.Key), err)
	}
	for _, it := range d.Items {
		if it.Family != "" && !j.win.covers(it.Table, it.Row) {
			continue // a contribution to a counter row outside the window
		}
		if it.Family == "" || j.whole {
			// Compared when the derived table is scanned: one scan
			// instead of a Get per row. A counter table is scanned only
			// by a run over the whole table, so a partial run reads its
			// contributions one by one.
			j.pending = append(j.pending, &expect{item: it, v: state.Version})
			continue
		}
		if err := j.item(ctx, it, state.Version); err != nil {
			return err
		}
	}
	if j.whole {
		for _, in := range d.Increments {
			if !j.win.covers(in.Table, in.Row) {
				continue
			}
			id := cellID(in.Table, in.Row, in.Family, in.Qualifier)
			fs := j.sums[id]
			if fs == nil {
				fs = &fastSum{Ref: layout.Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}}
				j.sums[id] = fs
			}
			fs.Sum += in.Delta
		}
	}
	return j.live(ctx, row.Key, state)
}

// entityKey decodes the entity key from a primary row key.
func (j *job) entityKey(pk []byte) ([]byte, error) {
	vals, err := j.prim.Key.DecodeValues(pk)
	if err != nil {
		return nil, err
	}
	return layout.EntityKey(j.ent, vals)
}

func (j *job) kind(table string) *Counts {
	switch j.plan.Table(table).Role {
	case schema.RoleLookup:
		return j.rep.Kinds[KindLookup]
	case schema.RoleCounter:
		return j.rep.Kinds[KindCounter]
	}
	return j.rep.Kinds[KindIndex]
}

// item compares one derived row (or counter contribution) with the store
// and repairs it at the entity's version v.
func (j *job) item(ctx context.Context, it layout.Item, v int64) error {
	g := store.Get{Row: it.Row}
	if it.Family != "" {
		g.Columns = []store.Column{{Family: it.Family, Qualifier: it.Qualifier}}
	}
	got, err := j.st.Get(ctx, it.Table, g)
	if err != nil {
		return fmt.Errorf("reconcile: get %s row %s: %w", it.Table, store.Printable(it.Row), err)
	}
	return j.check(ctx, it, v, got)
}

// check compares a derived row (or contribution) with what the store holds
// and repairs it at the entity's version v.
func (j *job) check(ctx context.Context, it layout.Item, v int64, got store.Row) error {
	c := j.kind(it.Table)
	var ms []store.Mutation
	matched := 0
	for _, sc := range got.Cells {
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
	if got.Empty() {
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
	return j.repair(ctx, c, it.Table, it.Row, ms)
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

// repair applies one row's repair mutations unless the run is dry.
func (j *job) repair(ctx context.Context, c *Counts, table string, row []byte, ms []store.Mutation) error {
	if j.opts.DryRun || len(ms) == 0 {
		return nil
	}
	if err := j.st.Mutate(ctx, table, store.RowMutation{Row: row, Mutations: ms}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.Failed++
		return nil
	}
	c.Repaired += int64(len(ms))
	return nil
}

// live compares the live copies of a state with the reference rows of the
// lookup tables and rewrites stale ones at the reference's timestamp.
func (j *job) live(ctx context.Context, pk []byte, state *layout.State) error {
	refs, err := layout.LiveRefs(j.plan, j.ent, state.Values)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	c := j.rep.Kinds[KindLive]
	book := layout.BookFamily(j.prim)
	var ms []store.Mutation
	for _, lr := range refs {
		fam := lr.Lookup.Families[0].Name
		src, err := j.refs.get(ctx, j.st, lr.Lookup.Name, fam, lr.Row)
		if err != nil {
			return err
		}
		for _, from := range lr.From {
			ref, ok := src.Latest(fam, layout.SourceQualifier(from))
			if !ok {
				continue // no reference data: readers show the snapshot value
			}
			q := layout.LiveQualifier(lr.Ref, lr.Key, from)
			have, ok := state.Live[string(q)]
			switch {
			case !ok:
				c.Missing++
			case have.Timestamp > ref.Timestamp || (have.Timestamp == ref.Timestamp && bytes.Equal(have.Value, ref.Value)):
				c.Valid++
				continue
			default:
				c.Stale++
			}
			ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: q, Timestamp: ref.Timestamp, Value: append([]byte(nil), ref.Value...)})
		}
	}
	return j.repair(ctx, c, j.prim.Name, pk, ms)
}

func cellID(table string, row []byte, fam string, q []byte) string {
	return layout.Ref{Table: table, Row: row, Family: fam, Qualifier: q}.ID()
}

func copyRow(r store.Row) store.Row {
	out := store.Row{Key: append([]byte(nil), r.Key...), Cells: make([]store.Cell, len(r.Cells))}
	for i, c := range r.Cells {
		out.Cells[i] = store.Cell{Row: out.Key, Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Timestamp: c.Timestamp, Value: append([]byte(nil), c.Value...)}
	}
	return out
}

// fastSum is the recomputed total of one fast-mode counter cell.
type fastSum struct {
	layout.Ref
	Sum int64
}

// expect is a derived row the primary pass expects, with its entity's
// version; done once compared.
type expect struct {
	item layout.Item
	v    int64
	done bool
}
