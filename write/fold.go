package write

import (
	"bytes"
	"slices"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
)

// entityPlan is what one entity's events in a batch come to.
type entityPlan struct {
	g *group
	// writePrimary: a new version is written; false for a pure redo.
	writePrimary bool
	version      int64
	deleted      bool
	derived      *layout.Derived // the final state's rows; nil when deleted
	// old: refs of earlier states to delete at version-1 (those the final
	// state derives again are cleared and rewritten instead). Sorted by
	// ref and without repeats once fold returns (sortOld), so that the
	// derived items, sorted the same way, are matched to it in one walk.
	old []layout.Ref
	// key is the primary row the entity is written to: the final state's
	// row, or for a delete the row it lived in (nil when no row is known:
	// only the locator records the delete).
	key []byte
	// vacate lists the other primary rows holding a live state of the
	// entity: the row it moved out of and what an interrupted move left.
	// Each gets its columns deleted below the version and a tombstone.
	vacate []located
	// inRow is what the row at key holds before the batch, derived; nil
	// when it holds no live state. Its columns the new state lacks are
	// deleted below the version.
	inRow *layout.Derived
	// from is the position of the event that made the version written,
	// kept in its pending records when placed (the event has one). A
	// value, not a pointer: one allocation less per entity.
	from   layout.Position
	placed bool
	// finish holds the pending refs of the stored version's write when it
	// may not have finished (unfinished) and the batch writes a newer
	// one: deleted at finishAt-1, as that write would have, before any
	// primary row of the batch. They must be gone before the new version's
	// pending record replaces the one that lists them.
	finish   []layout.Ref
	finishAt int64
	// first: the entity was never seen before; fast counters count it.
	first bool
	// stored is what the row held before the batch, derived; nil when the
	// row was empty or deleted. Derived rows of the stored state are
	// complete unless redo is set (a batch commits only when they are).
	stored *layout.Derived
	redo   bool
	// counted is the entity's new bounded-counter record, when the batch
	// writes one (planBounded).
	counted *countedWrite
	// live caches newLiveRefs.
	live     []layout.LiveRef
	liveDone bool
}

// fold walks one entity's events in log order against its stored state.
// An event older than the stored version is stale; one equal to it is a
// replay of what the row holds, whose copies are redone from the row's
// pending refs; newer ones advance the state, and the refs of every state
// passed through become deletes.
//
// The stored version's own write may not have finished: a crash may have
// stopped it after its primary rows. Its replay is in the log from the
// batch that failed on, but a shuffled log may bring a newer version of the
// entity first, and the replay then comes stale. So a write the batch's
// positions cannot show finished (unfinished) is redone by the advance:
// its pending deletes go out before the new primary rows (finish), and
// its copies are not taken as written.
func (w *Writer) fold(ds *deriveSet, g *group, firsts map[uint64]int64, stats *Stats) (*entityPlan, error) {
	st := g.state
	ep := &entityPlan{g: g, version: st.Version, first: st.Version == 0, key: g.at}
	var cur *layout.Derived
	if st.Exists() {
		d, err := ds.derive(w.plan, g.ent, st.Values)
		if err != nil {
			return nil, err
		}
		cur, ep.stored = d, d
	}
	ep.deleted = st.Deleted
	redo := false
	for _, p := range g.events {
		// The delete the locator recorded, replayed after a crash cut it
		// short: applied again in full rather than redone, since its rows
		// were never written.
		finish := g.cutShort && !ep.writePrimary && p.ev.Op == event.Delete && p.ev.Version == ep.version
		switch {
		case p.ev.Version < ep.version:
			stats.Stale++
			continue
		case finish:
		case p.ev.Version == ep.version && !ep.writePrimary:
			// The row holds this version already: a replay after a crash,
			// or a duplicate. Redo its copies in case they were lost.
			redo = true
			continue
		case p.ev.Version == ep.version:
			stats.Stale++ // a duplicate within the batch
			continue
		}
		// Only what the store holds needs deleting: the stored state's
		// refs (states folded within this batch were never written).
		if !ep.writePrimary {
			if ep.stored != nil {
				ep.old = slices.Grow(ep.old, len(ep.stored.Items))
				for _, it := range ep.stored.Items {
					ep.addOld(it.Ref)
				}
			}
			if !redo && st.Version > 0 && unfinished(g, st.Version, firsts) {
				redo = true
			}
		}
		ep.writePrimary = true
		ep.version = p.ev.Version
		ep.from, ep.placed = layout.Position{Stream: p.streamID, Offset: p.offset}, p.stream != ""
		ep.deleted = p.ev.Op == event.Delete
		switch {
		case !ep.deleted:
			ep.key = p.primKey
		case g.at != nil:
			ep.key = g.at // a delete deletes where the entity lives
		case g.lived != nil:
			ep.key = g.lived // or lived, when a delete was cut short
		default:
			ep.key = p.primKey // the hinted row, or none
		}
		cur = p.derived
		stats.Applied++
	}
	if !ep.writePrimary && !redo {
		return nil, nil
	}
	if redo {
		// The pending refs of every row written at the stored version:
		// the entity's, and those of rows a move emptied. A replay deletes
		// them with the state's copies; an advance first (finishRefs).
		// (st is one of them, or the locator's tombstone, which has none.)
		for _, f := range g.found {
			if f.state.Version == st.Version {
				ep.finish = append(ep.finish, f.state.Pending...)
			}
		}
		ep.finishAt = st.Version
		if !ep.writePrimary {
			ep.old = append(ep.old, ep.finish...)
			ep.finish = nil
		}
	}

	// Every other row holding a live state is vacated, and the copies its
	// state derived are deleted with the stored state's. Each state is
	// derived once here: vacate and primaryMutations use what is kept.
	if bytes.Equal(g.at, ep.key) {
		ep.inRow = ep.stored
	} else if g.at != nil && st.Exists() {
		ep.vacate = append(ep.vacate, located{key: g.at, state: st, derived: ep.stored})
	}
	for _, o := range g.others {
		d, err := ds.derive(w.plan, g.ent, o.state.Values)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(o.key, ep.key) {
			ep.inRow = d // rewritten in place
		} else {
			o.derived = d
			ep.vacate = append(ep.vacate, o)
		}
		for _, it := range d.Items {
			ep.addOld(it.Ref)
		}
	}
	ep.sortOld()
	ep.finishRefs()
	if redo && !ep.writePrimary {
		stats.Redone++
	}
	ep.redo = redo
	if !ep.deleted {
		ep.derived = cur
	}
	return ep, nil
}

// unfinished reports whether the write that made version v of g's entity
// may not have finished: some row written at v has no position of its
// writing event on record, or one the batch's positions do not show
// settled (settledBy). A lane is retired with its failed Apply (lanes), so
// a write on a lane this batch does not use counts as unfinished.
func unfinished(g *group, v int64, firsts map[uint64]int64) bool {
	for _, f := range g.found {
		if f.state.Version != v {
			continue
		}
		if at := f.state.WrittenBy; at == nil || !settledBy(firsts, at.Stream, at.Offset) {
			return true
		}
	}
	return false
}

// finishRefs keeps in finish only the refs that old lacks: old's are
// deleted or written again by the new version, after its primary rows.
func (ep *entityPlan) finishRefs() {
	if len(ep.finish) == 0 {
		return
	}
	slices.SortFunc(ep.finish, layout.Ref.Compare)
	ep.finish = slices.CompactFunc(ep.finish, func(a, b layout.Ref) bool { return a.Compare(b) == 0 })
	out, j := ep.finish[:0], 0
	for _, r := range ep.finish {
		for j < len(ep.old) && ep.old[j].Compare(r) < 0 {
			j++
		}
		if j < len(ep.old) && ep.old[j].Compare(r) == 0 {
			continue
		}
		out = append(out, r)
	}
	ep.finish = out
}

// fromPtr is the position for EncodePending: nil when the event had none.
func (ep *entityPlan) fromPtr() *layout.Position {
	if !ep.placed {
		return nil
	}
	return &ep.from
}

// addOld records a ref of an earlier state to delete.
func (ep *entityPlan) addOld(r layout.Ref) { ep.old = append(ep.old, r) }

// sortOld sorts old by ref and drops repeats. The refs mostly come from one
// derived state, whose items are sorted already: then only the check runs.
func (ep *entityPlan) sortOld() {
	if !slices.IsSortedFunc(ep.old, layout.Ref.Compare) {
		slices.SortFunc(ep.old, layout.Ref.Compare)
	}
	ep.old = slices.CompactFunc(ep.old, func(a, b layout.Ref) bool { return a.Compare(b) == 0 })
}

// familiesOf lists a table's family names.
func familiesOf(t *schema.Table) []string {
	out := make([]string, len(t.Families))
	for i, f := range t.Families {
		out[i] = f.Name
	}
	return out
}
