package reconcile

import (
	"bytes"
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// KindLocator counts primary rows by what their entity's locator row says
// of them: valid when it lists them as it must, missing when it does not.
// Only entities with a locator table have the kind.
const KindLocator = "locator"

// The writer reads no primary row of an entity whose locator row holds
// nothing (docs/writer.md, "Entities that move"): it writes a primary row
// only after the locator lists it, and never empties a locator row, so an
// empty one means the entity was never written. A store can break that
// without the writer: locator rows lost, or primary rows written before the
// schema had a locator. The writer would then take an existing entity for
// new, and a deleted one for never deleted. So the primary pass checks,
// for every primary row holding a state:
//
//   - a live state: its row is listed (a move unlists a row only once it is
//     emptied, so a listed row is what the writer reads);
//   - a tombstone: the locator row is not empty (a move unlists the row it
//     left, so a tombstone row may well be unlisted; the delete record or
//     the listing of the row moved to is what the writer needs).
//
// A repair lists the row at its state's version, as the writer would have;
// a locator row holding a cell newer than that is being written by the
// writer and is left to it.
// Listings of rows that hold nothing are left alone: they cost the writer
// a read and mislead nothing.

// locNeed is one primary row whose listing the pass checks.
type locNeed struct {
	pk   []byte
	live bool
	v    int64
}

// noteLocator keeps a primary row for the locator check of its chunk.
func (w *worker) noteLocator(pk []byte, st *layout.State) {
	if w.j.loc == nil || st.Version == 0 {
		return
	}
	w.locs = append(w.locs, locNeed{pk: pk, live: st.Exists(), v: st.Version})
}

// locators checks the rows noted since the last call against their
// locator rows, read in multi-gets, and repairs what is not listed.
func (w *worker) locators(ctx context.Context) error {
	j := w.j
	needs := w.locs
	w.locs = w.locs[:0]
	if len(needs) == 0 {
		return nil
	}
	gets := make([]store.Get, len(needs))
	for k, n := range needs {
		var err error
		if gets[k], err = j.locatorGet(n.pk); err != nil {
			return err
		}
	}
	c := w.rep.kind(KindLocator)
	for lo := 0; lo < len(gets); lo += locatorChunk {
		hi := min(len(gets), lo+locatorChunk)
		rows, err := store.GetMany(ctx, j.st, j.loc.Name, gets[lo:hi])
		if err != nil {
			return fmt.Errorf("reconcile: read locator rows of %s: %w", j.loc.Name, err)
		}
		for k, row := range rows {
			n := needs[lo+k]
			at, tomb := layout.ReadLocation(j.loc, row)
			ok := len(at) > 0 || tomb > 0
			if n.live {
				ok = layout.Listed(at, n.pk)
				// Listed beside others, or unlisted while others are
				// listed (a writer that moved the entity from this row
				// before the other writer wrote it).
				if len(at) > 1 || !ok && len(at) > 0 || tomb > n.v {
					left, err := w.leftBehind(ctx, n, ok, at, tomb, gets[lo+k].Row)
					if err != nil {
						return err
					}
					if left {
						continue
					}
				}
			}
			// A cell newer than the state read means the writer moved or
			// deleted the entity since: it owns the row (the row it left
			// is unlisted at a marker our listing would sit under).
			if ok || newestTimestamp(row) > n.v {
				c.Valid++
				continue
			}
			c.Missing++
			q := layout.LocationQualifier(n.pk)
			m := store.Mutation{Kind: store.Put, Family: layout.BookFamily(j.loc), Qualifier: q, Timestamp: n.v}
			if err := j.fix(ctx, w.rep, KindLocator, j.loc.Name, gets[lo+k].Row, []store.Mutation{m}); err != nil {
				return err
			}
		}
	}
	return nil
}

// locatorGet is the Get of the locator row of the entity in primary row
// pk: its bookkeeping family, which holds the listing and the delete.
func (j *job) locatorGet(pk []byte) (store.Get, error) {
	row, err := layout.LocatorRow(j.prim, j.loc, pk)
	if err != nil {
		return store.Get{}, fmt.Errorf("reconcile: locator row of %s row %s: %w", j.prim.Name, store.Printable(pk), err)
	}
	return store.Get{Row: row, Columns: []store.Column{{Family: layout.BookFamily(j.loc)}}}, nil
}

// locatorChunk is the locator rows one multi-get reads.
const locatorChunk = 128

// leftBehind checks a live primary row (listed or not) whose locator row
// lists other rows, or records a newer delete. The writer keeps one live row per entity: a move writes the row moved to
// and empties the row left, and a delete empties every row the locator
// lists. Two writers applying one entity's events at once (its events in
// two log streams, as when partitions are added to a keyed topic:
// docs/kafka.md) can each move it from the row it read, and leave it live
// in two rows; or one can move it and delete it in the row moved to before
// the other writes the row it read as the entity's, and the other then
// skips its own later events as older than that delete, leaving the
// entity live in a row nothing will empty; or one can move it from a row
// the other has listed and not yet written (unlisting it), and the other
// then write it there, live and unlisted. A row whose state is older than
// another listed row's state (live, or a tombstone) is left behind, and
// the repair does what the move or the delete would have: a tombstone at
// the newer version, and the row unlisted below it. Its copies are then
// orphans, which the next run deletes (this run derived them from the live
// state it read). It reports whether n's row was left behind (counted
// stale).
//
// A delete the locator row records newer than the row's state leaves it
// behind too: the writer records a delete of an entity it knows rows of
// only after emptying them (write/locate.go), so the deleting writer never
// knew of this row, and nothing else will empty it. (A writer before that
// order recorded the delete first: a crash between left the same store,
// and a repair then made its replay skip deleting the row's copies, which
// the next run deleted as orphans.)
func (w *worker) leftBehind(ctx context.Context, n locNeed, listed bool, at []layout.Location, tomb int64, locRow []byte) (bool, error) {
	j := w.j
	var newest int64
	if tomb > n.v {
		newest = tomb
	}
	for _, x := range at {
		if bytes.Equal(x.Key, n.pk) {
			continue
		}
		st, err := j.readState(ctx, x.Key, layout.SkipBookkeeping)
		if err != nil {
			return false, err
		}
		if st.Version > n.v {
			newest = max(newest, st.Version)
		}
	}
	if newest == 0 {
		return false, nil
	}
	// The scan read n's row before the locator row: a writer that deleted
	// or moved the entity since emptied it first (and wrote the locator
	// row after), so the row read again now says so. Only a row no writer
	// knew of is still older than the newer state.
	cur, err := j.readState(ctx, n.pk, layout.SkipBookkeeping)
	if err != nil {
		return false, err
	}
	if cur.Version > n.v {
		return false, nil
	}
	w.rep.kind(KindLocator).Stale++
	empty := []store.Mutation{{Kind: store.Put, Family: layout.BookFamily(j.prim), Qualifier: layout.QualTombstone, Timestamp: newest}}
	if err := j.fix(ctx, w.rep, KindLocator, j.prim.Name, n.pk, empty); err != nil || !listed {
		return true, err
	}
	unlist := []store.Mutation{{Kind: store.DeleteColumn, Family: layout.BookFamily(j.loc), Qualifier: layout.LocationQualifier(n.pk), Timestamp: newest - 1}}
	return true, j.fix(ctx, w.rep, KindLocator, j.loc.Name, locRow, unlist)
}
