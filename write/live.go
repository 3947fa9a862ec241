package write

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// liveSources reads the lookup tables' reference rows that the batch's new
// states need: a state that starts to reference a key copies the
// reference's latest values from there. Keyed by lookup table and row.
func (w *Writer) liveSources(ctx context.Context, plans []*entityPlan) (map[string]store.Row, error) {
	need := map[string]layout.LiveRef{}
	for _, ep := range plans {
		for _, lr := range w.newLiveRefs(ep) {
			need[lr.Lookup.Name+"\x00"+string(lr.Row)] = lr
		}
	}
	if len(need) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(need))
	for k := range need {
		keys = append(keys, k)
	}
	// Sorted, so each lookup table's rows are together: one getRows each.
	sort.Strings(keys)
	out := make(map[string]store.Row, len(keys))
	for lo := 0; lo < len(keys); {
		table := need[keys[lo]].Lookup.Name
		hi := lo
		var rows [][]byte
		for hi < len(keys) && need[keys[hi]].Lookup.Name == table {
			rows = append(rows, need[keys[hi]].Row)
			hi++
		}
		got, err := w.getRows(ctx, table, rows)
		if err != nil {
			return nil, fmt.Errorf("write: read reference rows of %s: %w", table, err)
		}
		for k, row := range got {
			out[keys[lo+k]] = row
		}
		lo = hi
	}
	return out, nil
}

// newLiveRefs lists the live references of an entity's final state that
// its stored state lacks (all of them on a redo, when the copies written
// may have been lost).
func (w *Writer) newLiveRefs(ep *entityPlan) []layout.LiveRef {
	if !ep.liveDone {
		ep.live, ep.liveDone = w.computeLiveRefs(ep), true
	}
	return ep.live
}

func (w *Writer) computeLiveRefs(ep *entityPlan) []layout.LiveRef {
	if ep.derived == nil || ep.deleted {
		return nil
	}
	final := ep.g.events[len(ep.g.events)-1]
	for _, p := range ep.g.events {
		if p.ev.Version == ep.version && p.derived != nil {
			final = p
		}
	}
	refs, err := layout.LiveKeys(w.plan, ep.g.ent, final.ev.State)
	if err != nil || len(refs) == 0 {
		return nil
	}
	// A row the entity just moved to holds none of its copies yet.
	all := ep.stored == nil || ep.redo || !ep.writePrimary || !bytes.Equal(ep.g.at, ep.key)
	var prev []layout.LiveRef
	if st := ep.g.state; !all && st != nil && st.Values != nil {
		prev, _ = layout.LiveKeys(w.plan, ep.g.ent, st.Values)
	}
	// Both lists are sorted by reference and key: walked together, the
	// keys the stored state held already drop out, and only the new ones
	// are located (worked out their lookup rows).
	out := refs[:0]
	j := 0
	for _, r := range refs {
		if !all {
			for j < len(prev) && liveCompare(prev[j], r) < 0 {
				j++
			}
			if j < len(prev) && liveCompare(prev[j], r) == 0 {
				continue
			}
		}
		if err := r.Locate(); err != nil {
			return nil
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// liveCompare orders live references as LiveKeys sorts them.
func liveCompare(a, b layout.LiveRef) int {
	if c := strings.Compare(a.Ref.Name, b.Ref.Name); c != 0 {
		return c
	}
	return bytes.Compare(a.Key, b.Key)
}

// liveMutations copies the reference rows' values into an entity's primary
// row, each at the reference's version.
func (w *Writer) liveMutations(ep *entityPlan, live map[string]store.Row, stats *Stats) []store.Mutation {
	var ms []store.Mutation
	book := layout.BookFamily(ep.g.prim)
	// Copies of references the entity no longer holds stay, unrefreshed
	// (their lookup rows are gone): readers only consult the copies of the
	// references a state holds. Deleting them would mask the same version
	// if the entity referenced the key again.
	for _, lr := range w.newLiveRefs(ep) {
		row, ok := live[lr.Lookup.Name+"\x00"+string(lr.Row)]
		if !ok {
			continue
		}
		fam := lr.Lookup.Families[0].Name
		rv, _ := layout.RefState(row, fam)
		for _, from := range lr.From {
			q := layout.LiveQualifier(lr.Ref, lr.Key, from)
			if c, ok := row.Latest(fam, layout.SourceQualifier(from)); ok {
				ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: q, Timestamp: c.Timestamp, Value: c.Value})
				stats.Cells[ep.g.prim.Name]++
			} else if rv > 0 {
				// The reference, at its newest version, has no such value
				// (deleted, or the field left out): mask any older copy an
				// interrupted write left in this row.
				ms = append(ms, store.Mutation{Kind: store.DeleteColumn, Family: book, Qualifier: q, Timestamp: rv})
				stats.Deletes[ep.g.prim.Name]++
			}
		}
	}
	return ms
}

// refresh applies events of referenced entities: their latest copied values
// go to the lookup table's reference row, and into every referencing row
// the lookup table lists, at the reference's version.
func (w *Writer) refresh(ctx context.Context, evs []*event.Event, stats *Stats) error {
	// One event per referenced key: the newest version (an older one would
	// be hidden by timestamps anyway).
	newest := map[string]*event.Event{}
	var order []string
	for _, ev := range evs {
		k := ev.Entity + "\x00" + ev.KeyString(w.plan.Entity(ev.Entity).Key)
		if cur, ok := newest[k]; !ok || ev.Version > cur.Version {
			if !ok {
				order = append(order, k)
			}
			newest[k] = ev
		}
	}
	var mu sync.Mutex
	marks := map[string][]store.RowMutation{} // by lookup table
	stats.Refreshed += len(evs)
	if err := w.each(ctx, len(order), func(ctx context.Context, i int) error {
		ev := newest[order[i]]
		for _, rr := range layout.ReferencesTo(w.plan, ev.Entity) {
			if err := w.refreshOne(ctx, ev, rr, stats, &mu, marks); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// The marks of the fan-outs that ran to their end, after all of them:
	// one Batch per lookup table rather than a call per key. A crash
	// before them costs only a full fan-out of the keys' next events.
	for _, t := range slices.Sorted(maps.Keys(marks)) {
		rows := marks[t]
		slices.SortFunc(rows, func(a, b store.RowMutation) int { return bytes.Compare(a.Row, b.Row) })
		if err := w.batchInTurn(ctx, t, rows); err != nil {
			return fmt.Errorf("write: mark fan-outs done in %s: %w", t, err)
		}
	}
	// One sync makes every refresh of the batch durable: each reference
	// row went to the store's one ordered log before its fan-out, so a
	// crash keeps that order.
	if sy, ok := w.st.(store.Syncer); ok && w.deferSync() && len(order) > 0 {
		if err := sy.Sync(ctx); err != nil {
			return fmt.Errorf("write: sync: %w", err)
		}
	}
	return nil
}

// refreshOne refreshes the copies of one referenced key, and adds the mark
// of a fan-out that ran to its end to marks, under mu.
func (w *Writer) refreshOne(ctx context.Context, ev *event.Event, rr layout.Referrer, stats *Stats, mu *sync.Mutex, marks map[string][]store.RowMutation) error {
	src := w.plan.Entity(ev.Entity)
	if len(src.Key) != 1 {
		return fmt.Errorf("write: live copies from %s need a one-field key", src.Name)
	}
	lr, err := layout.NewLiveRef(w.plan, rr.Ref, rr.Lookup, ev.Key[src.Key[0]])
	if err != nil {
		return err
	}
	v := ev.Version
	fam := rr.Lookup.Families[0].Name
	// The values to copy, as cells of the lookup table's reference row
	// (qualifier SourceQualifier) and of each referencing row (LiveQualifier).
	var vals []val
	for _, from := range lr.From {
		var b []byte
		if ev.Op == event.Upsert {
			if x, ok := ev.State[from]; ok && x != nil {
				f := src.Field(from)
				if b, err = layout.EncodeValue(f.Type, x); err != nil {
					return fmt.Errorf("write: live copy %s.%s: %w", src.Name, from, err)
				}
			}
		}
		vals = append(vals, val{from: from, q: layout.SourceQualifier(from), b: b})
	}
	mutation := func(family string, q []byte, b []byte) store.Mutation {
		if b == nil {
			return store.Mutation{Kind: store.DeleteColumn, Family: family, Qualifier: q, Timestamp: v}
		}
		return store.Mutation{Kind: store.Put, Family: family, Qualifier: q, Timestamp: v, Value: b}
	}
	// The reference row remembers the newest version seen and whether it
	// was a delete, the values copied, and the version whose fan-out last
	// ran to its end. An older event is stale: its copies would land
	// unmasked in rows written after a newer delete or upsert. An equal
	// one is a replay, whose fan-out is redone (a crash may have cut it)
	// unless the mark says it ran to its end.
	cols := make([]store.Column, 0, 2+len(vals))
	cols = append(cols, store.Column{Family: fam, Qualifier: layout.QualRefState}, store.Column{Family: fam, Qualifier: layout.QualRefFanned})
	for _, x := range vals {
		cols = append(cols, store.Column{Family: fam, Qualifier: x.q})
	}
	ref, err := w.st.Get(ctx, rr.Lookup.Name, store.Get{Row: lr.Row, Columns: cols})
	if err != nil {
		return fmt.Errorf("write: read reference row %s of %s: %w", store.Printable(lr.Row), rr.Lookup.Name, err)
	}
	cur, deleted := layout.RefState(ref, fam)
	if v < cur {
		mu.Lock()
		stats.Stale++
		mu.Unlock()
		return nil
	}
	state := layout.RefUpserted
	if ev.Op == event.Delete {
		state = layout.RefDeleted
	}
	ms := []store.Mutation{{Kind: store.Put, Family: fam, Qualifier: layout.QualRefState, Timestamp: v, Value: []byte{state}}}
	// An upsert that leaves the copied values as they are (a price change,
	// when the name is what orders copy), after the fan-out of the version
	// that wrote them ran to its end, moves the version on, so that older
	// events stay stale, and rewrites nothing else: the copies and the
	// reference row's values keep the timestamps readers and reconcile
	// compare them by. A popular product's every change would otherwise
	// rewrite every row holding it.
	same := state == layout.RefUpserted && cur > 0 && !deleted && sameSources(ref, fam, vals)
	if !same {
		for _, x := range vals {
			ms = append(ms, mutation(fam, x.q, x.b))
		}
	}
	if err := w.fenced(ctx, func(ctx context.Context) error {
		return w.st.Mutate(ctx, rr.Lookup.Name, store.RowMutation{Row: lr.Row, Mutations: ms, Durability: w.durability(rr.Lookup.Name)})
	}); err != nil {
		return fmt.Errorf("write: reference row of %s in %s: %w", store.Printable(lr.Row), rr.Lookup.Name, err)
	}
	if same {
		mu.Lock()
		stats.Cells[rr.Lookup.Name]++
		stats.Unchanged++
		mu.Unlock()
		return nil
	}
	sc, err := w.st.Scan(ctx, rr.Lookup.Name, store.Scan{Start: lr.Row, Stop: lr.Stop, Columns: []store.Column{{Family: fam, Qualifier: []byte("r")}}})
	if err != nil {
		return fmt.Errorf("write: scan %s for %s: %w", rr.Lookup.Name, store.Printable(lr.Row), err)
	}
	prim := w.plan.Primary(rr.Entity.Name)
	book := layout.BookFamily(prim)
	// Every referencing row gets the same cells: one list, shared by all
	// the row mutations (stores only read a mutation list).
	pm := make([]store.Mutation, len(vals))
	for k, x := range vals {
		pm[k] = mutation(book, layout.LiveQualifier(lr.Ref, lr.Key, x.from), x.b)
	}
	// The referencing rows' keys, copied out of the scanned rows (which the
	// scanner reuses) into one buffer; a row listed twice (an order with two
	// items of the product) is written once.
	var keyBuf []byte
	var ends []int
	for sc.Next(ctx) {
		c, ok := sc.Row().Latest(fam, []byte("r"))
		if !ok {
			continue
		}
		keyBuf = append(keyBuf, c.Value...)
		ends = append(ends, len(keyBuf))
	}
	err = sc.Err()
	// Closed before the writes: on HBase an open scanner holds a pooled
	// connection, and refreshes running side by side would each hold one
	// while waiting for another to write with.
	sc.Close()
	if err != nil {
		return fmt.Errorf("write: scan %s: %w", rr.Lookup.Name, err)
	}
	keys := make([][]byte, len(ends))
	for k, end := range ends {
		start := 0
		if k > 0 {
			start = ends[k-1]
		}
		keys[k] = keyBuf[start:end:end]
	}
	// In key order, as the writer's other batches are: the store inserts
	// neighbouring keys faster, and HBase groups them by region. Sorting
	// the keys alone moves a third of the bytes sorting row mutations would.
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	batch := make([]store.RowMutation, len(keys))
	for k, key := range keys {
		batch[k] = store.RowMutation{Row: key, Mutations: pm}
	}
	if err := w.batchInTurn(ctx, prim.Name, batch); err != nil {
		return err
	}
	mu.Lock()
	// Every listed row holds version v's values now.
	marks[rr.Lookup.Name] = append(marks[rr.Lookup.Name], store.RowMutation{Row: lr.Row,
		Mutations: []store.Mutation{{Kind: store.Put, Family: fam, Qualifier: layout.QualRefFanned, Timestamp: v}}})
	stats.Cells[rr.Lookup.Name] += len(vals) + 2
	stats.Cells[prim.Name] += len(batch) * len(vals)
	stats.Fanout += len(batch) * len(vals)
	mu.Unlock()
	return nil
}

// val is one value a refresh copies: the field it comes from, its
// qualifier in the reference row (layout.SourceQualifier), and its encoding
// (nil: the field is unset, and copies are masked).
type val struct {
	from string
	q    []byte
	b    []byte
}

// sameSources reports whether the reference row ref holds every value an
// upsert copies, all written by the version whose fan-out is the last that
// ran to its end (layout.QualRefFanned): then every row the lookup table
// listed holds them already. A value the upsert leaves out is never taken
// as the same: whether the rows' copies were masked cannot be read from the
// reference row.
func sameSources(ref store.Row, fam string, vals []val) bool {
	fanned, ok := ref.Latest(fam, layout.QualRefFanned)
	if !ok {
		return false
	}
	for _, x := range vals {
		c, ok := ref.Latest(fam, x.q)
		if !ok || x.b == nil || c.Timestamp != fanned.Timestamp || !bytes.Equal(c.Value, x.b) {
			return false
		}
	}
	return true
}

// each runs fn for 0..n-1 on the writer's readers and returns the first
// error.
func (w *Writer) each(ctx context.Context, n int, fn func(context.Context, int) error) error {
	return eachOn(ctx, w.opts.Readers, n, fn)
}

// eachOn runs fn for 0..n-1, width calls at a time, and returns the first
// error; after one, the calls still to come see a cancelled context, and
// those not started are not made. Workers take the next index from a
// counter, not a channel: a batch hands out thousands of small calls, and a
// channel send per call costs a goroutine hand-off each. The caller's
// goroutine is one of the workers.
func eachOn(ctx context.Context, width, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := ctx.Done()
	var next atomic.Int64
	var once sync.Once
	var first error
	run := func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}
	}
	var wg sync.WaitGroup
	for r := 1; r < width && r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	run()
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}
