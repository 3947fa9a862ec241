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
func (w *Writer) fold(ds *deriveSet, g *group, stats *Stats) (*entityPlan, error) {
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
			if !redo {
				redo = true
				// The pending refs of every row written at this version:
				// the entity's, and those of rows a move emptied.
				for _, f := range g.found {
					if f.state.Version == ep.version {
						for _, r := range f.state.Pending {
							ep.addOld(r)
						}
					}
				}
				for _, r := range st.Pending {
					ep.addOld(r)
				}
			}
			continue
		case p.ev.Version == ep.version:
			stats.Stale++ // a duplicate within the batch
			continue
		}
		// Only what the store holds needs deleting: the stored state's
		// refs (states folded within this batch were never written).
		if !ep.writePrimary && ep.stored != nil {
			ep.old = slices.Grow(ep.old, len(ep.stored.Items))
			for _, it := range ep.stored.Items {
				ep.addOld(it.Ref)
			}
		}
		ep.writePrimary = true
		ep.version = p.ev.Version
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
	if redo && !ep.writePrimary {
		stats.Redone++
	}
	ep.redo = redo
	if !ep.deleted {
		ep.derived = cur
	}
	return ep, nil
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
