// Package faults injects known numbers of faults of every kind into the
// copies of the orders example, for the reconcile tests (the package's own
// and the command's) to find exactly those.
package faults

import (
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Counts are the differences of one kind of copy that were injected.
type Counts struct {
	Missing, Stale, Orphaned, Drifted int64
	// Masked of them are missing copies behind a delete marker at or above
	// the entity's version: their repair cannot take effect until the
	// marker is purged.
	Masked int64
}

// Kinds of copies, as reconcile names them.
const (
	Index   = "index"
	Lookup  = "lookup"
	Counter = "counter"
	Live    = "live"
	Locator = "locator"
)

// Options say which faults a store can take.
type Options struct {
	// Purges: the store's MajorCompact purges markers before it returns
	// (the embedded store), so a lost write can be made without a marker.
	// Without it, lost writes are deletes at the entity's version, which
	// are also masked repairs.
	Purges bool
}

// Inject writes faults into st, which holds the writer's output for the
// orders example (exact, fast or bounded counters), and returns what it injected per
// kind. It needs at least 20 live orders with items and 4 with live copies.
func Inject(ctx context.Context, sp *schema.Plan, st store.Store, opts Options) (map[string]*Counts, error) {
	in := &injector{sp: sp, st: st, ent: sp.Entity("order"), prim: sp.Primary("order"), want: map[string]*Counts{}}
	for _, k := range []string{Index, Lookup, Counter, Live, Locator} {
		in.want[k] = &Counts{}
	}
	in.fast = sp.Table("daily_units").Counter.Mode == schema.CounterFast
	in.bounded = sp.Table("daily_units").Counter.Bounded()
	if err := in.run(ctx, opts); err != nil {
		return nil, err
	}
	return in.want, nil
}

type injector struct {
	sp      *schema.Plan
	st      store.Store
	ent     *schema.Entity
	prim    *schema.Table
	fast    bool
	bounded bool
	want    map[string]*Counts
	err     error
}

type entity struct {
	row   store.Row
	state *layout.State
	d     *layout.Derived
}

func (in *injector) mutate(ctx context.Context, table string, row []byte, ms ...store.Mutation) {
	if in.err == nil {
		if err := in.st.Mutate(ctx, table, store.RowMutation{Row: row, Mutations: ms}); err != nil {
			in.err = fmt.Errorf("faults: %s: %w", table, err)
		}
	}
}

func puts(cells []layout.Cell, ts int64) []store.Mutation {
	var ms []store.Mutation
	for _, c := range cells {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: ts, Value: c.Value})
	}
	return ms
}

func (in *injector) entities(ctx context.Context) ([]entity, error) {
	sc, err := in.st.Scan(ctx, in.prim.Name, store.Scan{})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	var out []entity
	for sc.Next(ctx) {
		r := sc.Row()
		row := store.Row{Key: append([]byte(nil), r.Key...)}
		for _, c := range r.Cells {
			c.Row = row.Key
			c.Qualifier = append([]byte(nil), c.Qualifier...)
			c.Value = append([]byte(nil), c.Value...)
			row.Cells = append(row.Cells, c)
		}
		s, err := layout.ReadState(in.sp, in.ent, in.prim, row)
		if err != nil {
			return nil, err
		}
		if !s.Exists() {
			continue
		}
		d, err := layout.Derive(in.sp, in.ent, s.Values)
		if err != nil {
			return nil, err
		}
		out = append(out, entity{row: row, state: s, d: d})
	}
	return out, sc.Err()
}

// first is the entity's first derived item in table.
func first(e entity, table string) (layout.Item, bool) {
	for _, it := range e.d.Items {
		if it.Table == table {
			return it, true
		}
	}
	return layout.Item{}, false
}

// ghost derives the copies of an order that does not exist.
func (in *injector) ghost(id string, items bool) (*layout.Derived, error) {
	st := map[string]any{"orderId": id, "customerId": "c-ghost", "placedAt": int64(1_760_000_000_000), "status": "OPEN"}
	if items {
		st["items"] = []map[string]any{{"line": int32(1), "sku": "sku00001", "quantity": int64(2)}}
	}
	return layout.Derive(in.sp, in.ent, st)
}

func (in *injector) run(ctx context.Context, opts Options) error {
	ents, err := in.entities(ctx)
	if err != nil {
		return fmt.Errorf("faults: %w", err)
	}
	var withItems, withLive []entity
	for _, e := range ents {
		if _, ok := first(e, "orders_by_product"); ok {
			withItems = append(withItems, e)
		}
		if len(e.state.Live) > 0 {
			withLive = append(withLive, e)
		}
	}
	if len(withItems) < 24 || len(withLive) < 4 {
		return fmt.Errorf("faults: too few orders: %d with items, %d with live copies", len(withItems), len(withLive))
	}
	take := func(n int) []entity { out := withItems[:n]; withItems = withItems[n:]; return out }
	idx, lk, cnt, live := in.want[Index], in.want[Lookup], in.want[Counter], in.want[Live]

	// A lost write: without a marker where the store purges, else a delete
	// at the version (which then masks the repair).
	lose := func(table string, row []byte, m store.Mutation, c *Counts) {
		in.mutate(ctx, table, row, m)
		c.Missing++
		if !opts.Purges {
			c.Masked++
		}
	}
	compact := func(table string) {
		if opts.Purges && in.err == nil {
			if err := in.st.MajorCompact(ctx, table); err != nil {
				in.err = err
			}
		}
	}

	// Orphaned index and lookup rows: of orders that never existed, and of
	// an earlier status left behind.
	for i := 0; i < 2; i++ {
		d, err := in.ghost(fmt.Sprintf("ghost-%d", i), true)
		if err != nil {
			return err
		}
		for _, it := range d.Items {
			switch it.Table {
			case "orders_by_status":
				in.mutate(ctx, it.Table, it.Row, puts(it.Cells, 5)...)
				idx.Orphaned++
			case "orders_by_product":
				in.mutate(ctx, it.Table, it.Row, puts(it.Cells, 5)...)
				lk.Orphaned++
			case "daily_units":
				if !in.fast {
					in.mutate(ctx, it.Table, it.Row, puts(it.Cells, 4)...)
					cnt.Orphaned++
				}
			}
		}
	}
	for _, e := range take(3) {
		old := map[string]any{}
		for k, v := range e.state.Values {
			old[k] = v
		}
		old["status"] = "OLD"
		d, err := layout.Derive(in.sp, in.ent, old)
		if err != nil {
			return err
		}
		it, _ := first(entity{d: d}, "orders_by_status")
		in.mutate(ctx, it.Table, it.Row, puts(it.Cells, e.state.Version-1)...)
		idx.Orphaned++
	}
	// Missing index and lookup rows (lost writes).
	for _, e := range take(3) {
		it, _ := first(e, "orders_by_sku")
		lose(it.Table, it.Row, store.Mutation{Kind: store.DeleteFamily, Family: "d", Timestamp: e.state.Version}, idx)
	}
	for _, e := range take(2) {
		it, _ := first(e, "orders_by_product")
		lose(it.Table, it.Row, store.Mutation{Kind: store.DeleteFamily, Family: "d", Timestamp: e.state.Version}, lk)
	}
	compact("orders_by_sku")
	compact("orders_by_product")
	// Stale rows: wrong covering values, and a cell no state derives.
	for _, e := range take(2) {
		it, _ := first(e, "orders_by_sku")
		in.mutate(ctx, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("s"), Timestamp: e.state.Version, Value: []byte("WRONG")})
		idx.Stale++
	}
	for _, e := range take(1) {
		it, _ := first(e, "orders_by_status")
		in.mutate(ctx, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("x"), Timestamp: e.state.Version, Value: []byte("junk")})
		idx.Stale++
	}
	for _, e := range take(1) {
		it, _ := first(e, "orders_by_product")
		in.mutate(ctx, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("x"), Timestamp: e.state.Version, Value: []byte("junk")})
		lk.Stale++
	}
	// Counters.
	if in.bounded {
		if err := in.boundedFaults(ctx, cnt); err != nil {
			return err
		}
	} else if in.fast {
		if err := in.fastFaults(ctx, opts, cnt); err != nil {
			return err
		}
	} else {
		for _, e := range take(1) {
			it, _ := first(e, "daily_units")
			in.mutate(ctx, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: it.Family, Qualifier: it.Qualifier, Timestamp: e.state.Version, Value: layout.Int64Cell(999)})
			cnt.Stale++
		}
		for _, e := range take(1) {
			it, _ := first(e, "daily_units")
			lose(it.Table, it.Row, store.Mutation{Kind: store.DeleteColumn, Family: it.Family, Qualifier: it.Qualifier, Timestamp: e.state.Version}, cnt)
		}
		compact("daily_units")
	}
	// Live copies: stale (an old product name), and lost.
	for _, e := range withLive[:2] {
		for _, c := range e.state.Live {
			in.mutate(ctx, in.prim.Name, e.row.Key, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp, Value: []byte("an old name")})
			live.Stale++
			break
		}
	}
	for _, e := range withLive[2:3] {
		for _, c := range e.state.Live {
			lose(in.prim.Name, e.row.Key, store.Mutation{Kind: store.DeleteColumn, Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp}, live)
			break
		}
	}
	compact(in.prim.Name)
	// Lost listings in the locator, of orders never written again since
	// they were placed (the listing's version is the state's), so that a
	// repair at the state's version puts back the very cell.
	if err := in.locatorFaults(ctx, ents, lose); err != nil {
		return err
	}
	compact(in.sp.Locator("order").Name)
	// Deletes masked by markers, as `denorm delete` leaves them: a row
	// delete at the store's clock, and a one-version delete --ts at the
	// entity's version.
	for _, e := range take(2) {
		it, _ := first(e, "orders_by_status")
		in.mutate(ctx, it.Table, it.Row, store.Mutation{Kind: store.DeleteRow, Timestamp: store.LatestTimestamp})
		idx.Missing++
		idx.Masked++
	}
	if !in.fast && !in.bounded {
		for _, e := range take(1) {
			it, _ := first(e, "daily_units")
			in.mutate(ctx, it.Table, it.Row, store.Mutation{Kind: store.DeleteVersion, Family: it.Family, Qualifier: it.Qualifier, Timestamp: e.state.Version})
			cnt.Missing++
			cnt.Masked++
		}
	}
	return in.err
}

// locatorFaults loses the listings of two orders whose listing carries
// their state's version.
func (in *injector) locatorFaults(ctx context.Context, ents []entity, lose func(table string, row []byte, m store.Mutation, c *Counts)) error {
	loc := in.sp.Locator("order")
	fam := layout.BookFamily(loc)
	n := 0
	for i := len(ents) - 1; i >= 0 && n < 2; i-- {
		e := ents[i]
		lk, err := layout.LocatorRow(in.prim, loc, e.row.Key)
		if err != nil {
			return err
		}
		q := layout.LocationQualifier(e.row.Key)
		got, err := in.st.Get(ctx, loc.Name, store.Get{Row: lk, Columns: []store.Column{{Family: fam, Qualifier: q}}})
		if err != nil {
			return err
		}
		if c, ok := got.Latest(fam, q); !ok || c.Timestamp != e.state.Version {
			continue
		}
		lose(loc.Name, lk, store.Mutation{Kind: store.DeleteColumn, Family: fam, Qualifier: q, Timestamp: e.state.Version}, in.want[Locator])
		n++
	}
	if n < 2 {
		return fmt.Errorf("faults: %d orders listed at their state's version, want 2", n)
	}
	return nil
}

// boundedFaults drifts bounded totals: three rows given a base cell that
// adds 7 to what their parts hold, and one given a plain total cell (as
// writers before part cells kept), which nothing updates any more. (A lost
// row is left out: reconcile can tell it from a batch awaiting its replay
// only once the stream has moved past it.)
func (in *injector) boundedFaults(ctx context.Context, cnt *Counts) error {
	sc, err := in.st.Scan(ctx, "daily_units", store.Scan{Limit: 4})
	if err != nil {
		return err
	}
	var rows []store.Row
	for sc.Next(ctx) {
		rows = append(rows, sc.Row().Clone())
	}
	sc.Close()
	if len(rows) < 4 {
		return fmt.Errorf("faults: %d counter rows", len(rows))
	}
	for i, r := range rows {
		cc, err := layout.ReadCounterCells(r, "c")
		if err != nil {
			return err
		}
		if !cc.Counted() {
			return fmt.Errorf("faults: bounded counter row without a state cell")
		}
		var ts int64
		for _, c := range r.Cells {
			ts = max(ts, c.Timestamp)
		}
		var m store.Mutation
		if i < 3 {
			base := cc.Base.State
			base.Add("c", []byte("u"), 7)
			m = store.Mutation{Kind: store.Put, Family: "c", Qualifier: layout.QualCounterState, Timestamp: ts + 1, Value: layout.EncodeCounterState(base)}
		} else {
			m = store.Mutation{Kind: store.Put, Family: "c", Qualifier: []byte("u"), Timestamp: ts + 1, Value: layout.Int64Cell(cc.Merged().Total("c", []byte("u")) + 1)}
		}
		in.mutate(ctx, "daily_units", r.Key, m)
		cnt.Drifted++
	}
	return nil
}

// fastFaults drifts fast-mode totals: three bumped, one lost.
func (in *injector) fastFaults(ctx context.Context, opts Options, cnt *Counts) error {
	sc, err := in.st.Scan(ctx, "daily_units", store.Scan{Limit: 4})
	if err != nil {
		return err
	}
	var rows [][]byte
	for sc.Next(ctx) {
		rows = append(rows, append([]byte(nil), sc.Row().Key...))
	}
	sc.Close()
	if len(rows) < 4 {
		return fmt.Errorf("faults: %d counter rows", len(rows))
	}
	for _, r := range rows[:3] {
		if _, err := in.st.Increment(ctx, "daily_units", store.Increment{Row: r, Columns: []store.IncrementColumn{{Family: "c", Qualifier: []byte("u"), Delta: 7}}}); err != nil {
			return err
		}
		cnt.Drifted++
	}
	if !opts.Purges {
		return nil // a lost total would be masked: left to the embedded store
	}
	got, err := in.st.Get(ctx, "daily_units", store.Get{Row: rows[3]})
	if err != nil {
		return err
	}
	c, ok := got.Latest("c", []byte("u"))
	if !ok {
		return fmt.Errorf("faults: counter row without a total")
	}
	in.mutate(ctx, "daily_units", rows[3], store.Mutation{Kind: store.DeleteColumn, Family: "c", Qualifier: []byte("u"), Timestamp: c.Timestamp})
	cnt.Drifted++
	if in.err == nil {
		in.err = in.st.MajorCompact(ctx, "daily_units")
	}
	return nil
}
