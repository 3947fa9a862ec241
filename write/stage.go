package write

import (
	"context"
	"sort"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
)

// A batch is applied in two halves. stage validates and derives its
// events, reads the stored state of its entities and folds their events
// into plans; finish writes the plans and refreshes live copies. Only
// finish writes, and only stage's reads of entity state can run early:
// Run stages the next batch while the last one is being written
// (pipeline.go). An entity's stored state is its locator row and its
// primary rows, which only the batches holding that entity's events write
// (a live-copy refresh writes other rows, or cells of a primary row that
// no state read takes). So a staged batch reads early exactly the entities
// the batch being written does not hold; the others it reads in finish,
// after that batch has returned, and sees what it wrote. Everything else
// finish reads (reference rows, counter rows) is read in finish as well.

// staged is a batch between stage and finish.
type staged struct {
	ds        *deriveSet
	stats     Stats
	rejected  []Rejected
	groups    []*group
	refreshes []*event.Event
	// eps and folded are per group, set once the group is folded; later
	// lists the groups stage left for finish to read and fold.
	eps    []*entityPlan
	folded []Stats
	later  []*group
	// laterAt is each later group's index in groups.
	laterAt []int
	// firsts is, per stream (layout.StreamID), the offset of the batch's
	// first event in it, rejected events included: bounded counters take
	// every record of the stream below it as counted, and fold every
	// write below it as finished (docs/writer.md).
	firsts map[uint64]int64
}

// settledBy reports whether firsts (a batch's first offset per stream)
// shows the event at offset of stream written by a batch that finished:
// one of the batch's streams, and before the batch's first event in it. A
// failed batch leaves its log uncommitted and is read again from its
// first event, so anything at or past that may come from an attempt that
// did not finish. Bounded counters take such a record as counted, and fold
// such a write as finished.
func settledBy(firsts map[uint64]int64, stream uint64, offset int64) bool {
	first, ok := firsts[stream]
	return ok && offset < first
}

// release returns the batch's derive buffers; nothing of the batch may be
// used after it.
func (b *staged) release() {
	if b.ds != nil {
		b.ds.release()
		b.ds = nil
	}
}

// busy names the entities of a batch being written: an entity of the
// next batch that is among them is read after that batch returns.
type busy struct {
	// entities holds entity \x00 group key: what groups an entity's events
	// by (its entity key when a locator follows it, else its primary row).
	entities map[string]bool
	// rows holds table \x00 row key of every primary row the batch's
	// events name: a second guard, for a primary row that events of two
	// entities name.
	rows map[string]bool
}

func groupID(entity string, key []byte) string { return entity + "\x00" + string(key) }

// id is the group's groupID: its events share the entity and group key.
func (g *group) id() string { return groupID(g.ent.Name, g.events[0].groupKey) }

func rowID(table string, key []byte) string { return table + "\x00" + string(key) }

// busyOf is what b will write among the rows a staged batch reads early.
func busyOf(b *staged) *busy {
	bz := &busy{entities: make(map[string]bool, len(b.groups)), rows: map[string]bool{}}
	for _, g := range b.groups {
		bz.entities[g.id()] = true
		for _, p := range g.events {
			if p.primKey != nil {
				bz.rows[rowID(g.prim.Name, p.primKey)] = true
			}
		}
	}
	return bz
}

// holds reports whether g's state may be written by the batch bz names.
func (bz *busy) holds(g *group) bool {
	if bz == nil {
		return false
	}
	if bz.entities[g.id()] {
		return true
	}
	for _, p := range g.events {
		if p.primKey != nil && bz.rows[rowID(g.prim.Name, p.primKey)] {
			return true
		}
	}
	if g.loc != nil {
		for _, x := range g.loc.at {
			if bz.rows[rowID(g.prim.Name, x.Key)] {
				return true
			}
		}
	}
	return false
}

// stage validates and derives evs, then reads and folds every entity that
// the batch being written (bz; nil when none is) does not hold. An error
// means the store failed; the batch's derive buffers are then the caller's
// to release.
func (w *Writer) stage(ctx context.Context, evs []*event.Event, ln *lane, stats Stats, bz *busy) (*staged, error) {
	b := &staged{ds: newDeriveSet(&w.scratch), stats: stats}
	b.firsts = firstOffsets(evs, ln)
	byKey := map[string]*group{}
	todo := make([]int, 0, len(evs))
	now := w.opts.Clock()
	for i, ev := range evs {
		if w.expired(ev, now) {
			b.stats.Expired++
			continue
		}
		referrers := layout.ReferencesTo(w.plan, ev.Entity)
		if len(referrers) > 0 {
			if err := w.checkReference(ev, referrers); err != nil {
				b.rejected = append(b.rejected, Rejected{Index: i, Event: ev, Reason: err})
				continue
			}
			b.refreshes = append(b.refreshes, ev)
			if w.plan.Primary(ev.Entity) == nil {
				continue
			}
		}
		todo = append(todo, i)
	}
	// Validating and deriving one event is CPU work that needs no other
	// event: it runs on several goroutines, and the results are grouped
	// below in event order.
	preps := make([]*pending, len(todo))
	perrs := make([]error, len(todo))
	if err := w.each(ctx, len(todo), func(_ context.Context, k int) error {
		preps[k], perrs[k] = w.prepare(b.ds, todo[k], evs[todo[k]])
		return nil
	}); err != nil {
		return b, err
	}
	var ids streamIDs
	for k, i := range todo {
		ev, p := evs[i], preps[k]
		if perrs[k] != nil {
			b.rejected = append(b.rejected, Rejected{Index: i, Event: ev, Reason: perrs[k]})
			continue
		}
		p.stream, p.offset = ev.Stream, ev.Offset
		if p.stream == "" && ln != nil {
			p.stream, p.offset = ln.stream, ln.next+int64(i)
		}
		if p.stream != "" {
			p.streamID = ids.of(p.stream)
		}
		id := groupID(ev.Entity, p.groupKey)
		g := byKey[id]
		if g == nil {
			g = &group{ent: p.ent, prim: w.plan.Primary(ev.Entity)}
			byKey[id] = g
			b.groups = append(b.groups, g)
		}
		g.events = append(g.events, p)
	}
	sort.Slice(b.rejected, func(i, j int) bool { return b.rejected[i].Index < b.rejected[j].Index })
	b.stats.Rejected = len(b.rejected)
	b.eps = make([]*entityPlan, len(b.groups))
	b.folded = make([]Stats, len(b.groups))

	free := make([]int, 0, len(b.groups))
	for i, g := range b.groups {
		if bz.holds(g) {
			b.later, b.laterAt = append(b.later, g), append(b.laterAt, i)
		} else {
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		return b, nil
	}
	early := make([]*group, len(free))
	for k, i := range free {
		early[k] = b.groups[i]
	}
	if bz != nil {
		// A locator may list a row the batch being written holds: such a
		// group waits for it too, and reads its locator again then.
		if err := w.readLocations(ctx, early); err != nil {
			return b, err
		}
		keep := early[:0]
		keepAt := free[:0]
		for k, g := range early {
			if bz.holds(g) {
				g.loc = nil
				b.later, b.laterAt = append(b.later, g), append(b.laterAt, free[k])
				continue
			}
			keep, keepAt = append(keep, g), append(keepAt, free[k])
		}
		early, free = keep, keepAt
	}
	how := readLocators
	if bz != nil {
		how = locatorsRead
	}
	return b, w.readAndFold(ctx, b, early, free, how)
}

// readAndFold reads the stored state of groups (at idx in b.groups), as
// how says, and folds their events.
func (w *Writer) readAndFold(ctx context.Context, b *staged, groups []*group, idx []int, how stateRead) error {
	if err := w.readStatesOf(ctx, groups, how); err != nil {
		return err
	}
	// Folding one entity's events (deriving its stored state) and listing
	// its new live references need no other entity either.
	return w.each(ctx, len(groups), func(_ context.Context, k int) error {
		i := idx[k]
		ep, err := w.fold(b.ds, groups[k], b.firsts, &b.folded[i])
		if ep != nil {
			w.newLiveRefs(ep) // computed here, in parallel, and kept in ep
		}
		b.eps[i] = ep
		return err
	})
}

// finish reads and folds the groups stage left, writes the batch and
// refreshes its live copies. It releases the batch.
func (w *Writer) finish(ctx context.Context, b *staged) (Stats, []Rejected, error) {
	defer b.release()
	stats, rejected := b.stats, b.rejected
	if len(b.later) > 0 {
		// The batch before wrote these entities: their locator rows list
		// rows, and the rows their events name are read beside them.
		if err := w.readAndFold(ctx, b, b.later, b.laterAt, rowsBeside); err != nil {
			return stats, rejected, err
		}
	}
	var plans []*entityPlan
	for i, ep := range b.eps {
		stats.Add(b.folded[i])
		if ep != nil {
			plans = append(plans, ep)
		}
	}
	if err := w.write(ctx, plans, b.firsts, &stats); err != nil {
		return stats, rejected, err
	}
	// Live copies of referenced entities changed in this batch, after the
	// lookup rows of this batch's entities are written, so none is missed.
	if err := w.refresh(ctx, b.refreshes, &stats); err != nil {
		return stats, rejected, err
	}
	return stats, rejected, nil
}
