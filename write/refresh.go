package write

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// refresh applies events of referenced entities: their latest copied values
// go to the lookup table's reference row, and into every referencing row
// the lookup table lists, at the reference's version.
//
// The keys' reference rows are read in one multi-get and written in one
// batch per lookup table, before any fan-out: on HBase a refresh of a key
// one call at a time made five or six round trips of it, most of a batch's
// calls when a tenth of its keys were referenced ones. Each reference row
// still reaches the store before its own fan-out.
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
	stats.Refreshed += len(evs)
	var jobs []*refreshJob
	for _, k := range order {
		ev := newest[k]
		for _, rr := range layout.ReferencesTo(w.plan, ev.Entity) {
			j, err := w.newRefreshJob(ev, rr)
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
	}
	if err := w.writeReferenceRows(ctx, jobs, stats); err != nil {
		return err
	}
	var mu sync.Mutex
	marks := map[string][]store.RowMutation{} // by lookup table
	if err := w.each(ctx, len(jobs), func(ctx context.Context, i int) error {
		if !jobs[i].fan {
			return nil
		}
		return w.fanOut(ctx, jobs[i], stats, &mu, marks)
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

// refreshJob is the refresh of one referenced key through one lookup
// table.
type refreshJob struct {
	ev  *event.Event
	rr  layout.Referrer
	lr  layout.LiveRef
	fam string // the lookup table's family
	// vals are the values to copy, as cells of the reference row
	// (qualifier SourceQualifier) and of each referencing row
	// (LiveQualifier).
	vals []val
	// fan: the reference row took the event's values, and the rows the
	// lookup table lists are to take them too.
	fan bool
}

// val is one value a refresh copies: the field it comes from, its
// qualifier in the reference row (layout.SourceQualifier), and its encoding
// (nil: the field is unset, and copies are masked).
type val struct {
	from string
	q    []byte
	b    []byte
}

func (w *Writer) newRefreshJob(ev *event.Event, rr layout.Referrer) (*refreshJob, error) {
	src := w.plan.Entity(ev.Entity)
	if len(src.Key) != 1 {
		return nil, fmt.Errorf("write: live copies from %s need a one-field key", src.Name)
	}
	lr, err := layout.NewLiveRef(w.plan, rr.Ref, rr.Lookup, ev.Key[src.Key[0]])
	if err != nil {
		return nil, err
	}
	j := &refreshJob{ev: ev, rr: rr, lr: lr, fam: rr.Lookup.Families[0].Name}
	for _, from := range lr.From {
		var b []byte
		if ev.Op == event.Upsert {
			if x, ok := ev.State[from]; ok && x != nil {
				f := src.Field(from)
				if b, err = layout.EncodeValue(f.Type, x); err != nil {
					return nil, fmt.Errorf("write: live copy %s.%s: %w", src.Name, from, err)
				}
			}
		}
		j.vals = append(j.vals, val{from: from, q: layout.SourceQualifier(from), b: b})
	}
	return j, nil
}

// mutation is the cell of one copied value at version v: a put, or a
// delete marker when the value is unset.
func (x val) mutation(family string, q []byte, v int64) store.Mutation {
	if x.b == nil {
		return store.Mutation{Kind: store.DeleteColumn, Family: family, Qualifier: q, Timestamp: v}
	}
	return store.Mutation{Kind: store.Put, Family: family, Qualifier: q, Timestamp: v, Value: x.b}
}

// writeReferenceRows reads the jobs' reference rows, one multi-get per
// lookup table, decides each job, and writes the rows that take the
// events, one batch per lookup table. A job whose event is older than
// its row's newest is stale and does nothing; one whose values its row
// holds from a fan-out that ran to its end moves the row's version on and
// fans out nothing; the others are marked to fan out.
//
// The reference row remembers the newest version seen and whether it was
// a delete, the values copied, and the version whose fan-out last ran to
// its end. An older event is stale: its copies would land unmasked in rows
// written after a newer delete or upsert. An equal one is a replay, whose
// fan-out is redone (a crash may have cut it) unless the mark says it ran
// to its end.
func (w *Writer) writeReferenceRows(ctx context.Context, jobs []*refreshJob, stats *Stats) error {
	byTable := map[string][]*refreshJob{}
	for _, j := range jobs {
		byTable[j.rr.Lookup.Name] = append(byTable[j.rr.Lookup.Name], j)
	}
	for _, table := range slices.Sorted(maps.Keys(byTable)) {
		js := byTable[table]
		gets := make([]store.Get, len(js))
		for i, j := range js {
			cols := make([]store.Column, 0, 2+len(j.vals))
			cols = append(cols, store.Column{Family: j.fam, Qualifier: layout.QualRefState}, store.Column{Family: j.fam, Qualifier: layout.QualRefFanned})
			for _, x := range j.vals {
				cols = append(cols, store.Column{Family: j.fam, Qualifier: x.q})
			}
			gets[i] = store.Get{Row: j.lr.Row, Columns: cols}
		}
		refs, err := store.GetMany(ctx, w.st, table, gets)
		if err != nil {
			return fmt.Errorf("write: read %d reference rows of %s: %w", len(gets), table, err)
		}
		var rows []store.RowMutation
		for i, j := range js {
			v := j.ev.Version
			cur, deleted := layout.RefState(refs[i], j.fam)
			if v < cur {
				stats.Stale++
				continue
			}
			state := layout.RefUpserted
			if j.ev.Op == event.Delete {
				state = layout.RefDeleted
			}
			ms := []store.Mutation{{Kind: store.Put, Family: j.fam, Qualifier: layout.QualRefState, Timestamp: v, Value: []byte{state}}}
			// An upsert that leaves the copied values as they are (a price
			// change, when the name is what orders copy), after the fan-out
			// of the version that wrote them ran to its end, moves the
			// version on, so that older events stay stale, and rewrites
			// nothing else: the copies and the reference row's values keep
			// the timestamps readers and reconcile compare them by. A
			// popular product's every change would otherwise rewrite every
			// row holding it.
			same := state == layout.RefUpserted && cur > 0 && !deleted && sameSources(refs[i], j.fam, j.vals)
			if same {
				stats.Cells[table]++
				stats.Unchanged++
			} else {
				for _, x := range j.vals {
					ms = append(ms, x.mutation(j.fam, x.q, v))
				}
				j.fan = true
			}
			rows = append(rows, store.RowMutation{Row: j.lr.Row, Mutations: ms})
		}
		slices.SortFunc(rows, func(a, b store.RowMutation) int { return bytes.Compare(a.Row, b.Row) })
		if err := w.batchInTurn(ctx, table, rows); err != nil {
			return fmt.Errorf("write: reference rows of %d keys in %s: %w", len(rows), table, err)
		}
	}
	return nil
}

// fanOut copies a job's values into every row its lookup table lists, and
// adds the mark of a fan-out that ran to its end to marks, under mu.
func (w *Writer) fanOut(ctx context.Context, j *refreshJob, stats *Stats, mu *sync.Mutex, marks map[string][]store.RowMutation) error {
	lr, fam, v := j.lr, j.fam, j.ev.Version
	sc, err := w.st.Scan(ctx, j.rr.Lookup.Name, store.Scan{Start: lr.Row, Stop: lr.Stop, Columns: []store.Column{{Family: fam, Qualifier: []byte("r")}}})
	if err != nil {
		return fmt.Errorf("write: scan %s for %s: %w", j.rr.Lookup.Name, store.Printable(lr.Row), err)
	}
	prim := w.plan.Primary(j.rr.Entity.Name)
	book := layout.BookFamily(prim)
	// Every referencing row gets the same cells: one list, shared by all
	// the row mutations (stores only read a mutation list).
	pm := make([]store.Mutation, len(j.vals))
	for k, x := range j.vals {
		pm[k] = x.mutation(book, layout.LiveQualifier(lr.Ref, lr.Key, x.from), v)
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
		return fmt.Errorf("write: scan %s: %w", j.rr.Lookup.Name, err)
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
	marks[j.rr.Lookup.Name] = append(marks[j.rr.Lookup.Name], store.RowMutation{Row: lr.Row,
		Mutations: []store.Mutation{{Kind: store.Put, Family: fam, Qualifier: layout.QualRefFanned, Timestamp: v}}})
	stats.Cells[j.rr.Lookup.Name] += len(j.vals) + 2
	stats.Cells[prim.Name] += len(batch) * len(j.vals)
	stats.Fanout += len(batch) * len(j.vals)
	mu.Unlock()
	return nil
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
