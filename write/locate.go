package write

import (
	"bytes"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// location is what an entity's locator row says.
type location struct {
	table *schema.Table
	row   []byte // the locator row
	// at lists the primary rows the entity may live in.
	at []layout.Location
	// tomb is the version of the entity's last delete, 0 when none.
	tomb int64
}

// empty reports whether the locator row holds neither a listing nor a
// delete: the entity was never written.
func (l *location) empty() bool { return len(l.at) == 0 && l.tomb == 0 }

func (l *location) lists(key []byte) bool { return layout.Listed(l.at, key) }

// locatorMutations keep the locator in step with an entity plan. The first
// set goes before the primary rows: the row the entity goes to is listed
// before it is written, and a delete is recorded. The second goes after
// every other write of the plan: the rows the entity left are unlisted
// only once they are emptied and their copies deleted.
func (w *Writer) locatorMutations(ep *entityPlan, stats *Stats) (before, after []store.Mutation) {
	loc := ep.g.loc
	if loc == nil {
		return nil, nil
	}
	fam := layout.BookFamily(loc.table)
	if ep.deleted {
		// A delete of an entity the locator lists rows of is recorded
		// after the rows are emptied, so that a locator row recording a
		// delete newer than a live row it lists means a row the deleting
		// writer never knew of (reconcile repairs it: a second log stream
		// of the entity), never a delete a crash cut short (whose replay
		// finds the rows' tombstones and redoes the rest). The delete of
		// an entity no row holds is recorded first: it is the only write.
		tomb := store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.QualTombstone, Timestamp: ep.version}
		if len(loc.at) > 0 {
			after = append(after, tomb)
		} else {
			before = append(before, tomb)
		}
	}
	if ep.key != nil && !loc.lists(ep.key) {
		before = append(before, store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.LocationQualifier(ep.key), Timestamp: ep.version})
	}
	for _, x := range loc.at {
		if !bytes.Equal(x.Key, ep.key) {
			after = append(after, store.Mutation{Kind: store.DeleteColumn, Family: fam, Qualifier: layout.LocationQualifier(x.Key), Timestamp: ep.version - 1})
		}
	}
	for _, ms := range [][]store.Mutation{before, after} {
		for _, m := range ms {
			if m.Kind == store.Put {
				stats.Cells[loc.table.Name]++
			} else {
				stats.Deletes[loc.table.Name]++
			}
		}
	}
	return before, after
}
