package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// A bounded counter's totals hold what the entities' Counted records say
// (bounded.go), and the writer records, with every state it writes, all
// the counts of that state. One kind of entity is counted by no record: one
// written before the counter was declared (a counter added to a running
// schema), since that writer knew of no such table. Replaying the log would
// not count it either: the writer skips the versions it has. So the diff
// adopts it: where a live entity's state counts in a cell its record does
// not name, the record gains that count with Base equal to Now (in the
// totals whatever the row's sequences say), by a check-and-mutate on the
// record as read. The totals are left as they are: the next run finds them
// short of what the records say and adds the difference, as for any drift.
//
// Why not add it to the totals in the same run: a writer may have read the
// entity's record before the adoption and write its batch after it. It
// took the count for absent from the totals (its record named no such
// cell), so it adds the whole count itself, and writes a newer record that
// hides the adopted one. An addition by this run would then be counted
// twice. By the next run that writer has written (runs are minutes apart, a
// batch takes seconds), so the records it reads are the ones the totals
// follow: the hidden adoption counts for nothing, and a writer that read
// the adopted record added only its change (docs/writer.md, Lemmas 2 and
// 3). TestAdoptionWithConcurrentWriter caught the same-run version, under
// -race, counting such entities twice.
//
// A writer that wrote a new record before the check-and-mutate counted the
// entity itself: the check fails, and nothing is adopted. (Without the
// check the put, at the old record's timestamp, would lie under the newer
// record, and the read-back would find it hidden.)

// adoption is one live entity with counts no record holds.
type adoption struct {
	pk      []byte          // its primary row
	record  *layout.Counted // its record as read (nil: none)
	cell    store.Cell      // the record's cell as read, when hasCell
	hasCell bool
	version int64          // its state's version
	counts  []layout.Count // the counts to adopt, Base equal to Now
}

// uncounted lists the counts of a live entity's bounded increments that its
// record does not name, for the cells kept reports the diff covers.
func uncounted(st *layout.State, incs []layout.Increment, kept func(layout.Increment) bool) []layout.Count {
	var out []layout.Count
	for _, in := range incs {
		if !in.Bounded || in.Delta == 0 || !kept(in) {
			continue
		}
		ref := layout.Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}
		if named(st.Counted, ref) {
			continue
		}
		i, found := slices.BinarySearchFunc(out, ref, func(c layout.Count, r layout.Ref) int { return c.Compare(r) })
		if found {
			out[i].Base += in.Delta
			out[i].Now += in.Delta
			continue
		}
		ref.Row, ref.Qualifier = bytes.Clone(ref.Row), bytes.Clone(ref.Qualifier)
		out = slices.Insert(out, i, layout.Count{Ref: ref, Base: in.Delta, Now: in.Delta})
	}
	return out
}

// named reports whether a record names a counter cell.
func named(c *layout.Counted, r layout.Ref) bool {
	if c == nil {
		return false
	}
	_, ok := slices.BinarySearchFunc(c.Counts, r, func(x layout.Count, r layout.Ref) int { return x.Compare(r) })
	return ok
}

// newAdoption keeps what adopting an entity's counts needs of its row,
// cloned: the row belongs to the scan's chunk.
func newAdoption(row store.Row, st *layout.State, book string, counts []layout.Count) adoption {
	a := adoption{pk: bytes.Clone(row.Key), record: st.Counted, version: st.Version, counts: counts}
	if c, ok := row.Latest(book, layout.QualCounted); ok {
		a.cell, a.hasCell = store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Timestamp: c.Timestamp, Value: bytes.Clone(c.Value)}, true
	}
	return a
}

// adopt reports an entity's uncounted counts as missing and, in a repair,
// writes its record with them.
func (j *job) adopt(ctx context.Context, rep *Report, a adoption) error {
	c := rep.Kinds[KindCounter]
	c.Missing += int64(len(a.counts))
	if j.opts.DryRun {
		return nil
	}
	rec := &layout.Counted{}
	if a.record != nil {
		rec.Stream, rec.Offset = a.record.Stream, a.record.Offset
		rec.Counts = slices.Clone(a.record.Counts)
	}
	rec.Counts = append(rec.Counts, a.counts...)
	slices.SortFunc(rec.Counts, func(x, y layout.Count) int { return x.Compare(y.Ref) })
	book := layout.BookFamily(j.prim)
	// At the record's own timestamp, over it; without one, at the state's
	// version, where the writer puts a record.
	ts := a.version
	if a.hasCell {
		ts = a.cell.Timestamp
	}
	value := layout.EncodeCounted(rec)
	m := store.RowMutation{Row: a.pk, Mutations: []store.Mutation{{Kind: store.Put, Family: book, Qualifier: layout.QualCounted, Timestamp: ts, Value: value}}}
	cond := store.Condition{Family: book, Qualifier: layout.QualCounted, Value: a.cell.Value, Absent: !a.hasCell}
	ok, err := j.st.CheckAndMutate(ctx, j.prim.Name, cond, m)
	if err != nil || !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cause := "a writer changed the entity's Counted record since it was read"
		if err != nil {
			cause = fmt.Sprintf("the store refused the record: %v", err)
		}
		rep.fail(KindCounter, j.prim.Name, a.pk, cause)
		return nil
	}
	c.Repaired++
	got, err := j.st.Get(ctx, j.prim.Name, store.Get{Row: a.pk, Columns: []store.Column{{Family: book, Qualifier: layout.QualCounted}}})
	if err != nil {
		return fmt.Errorf("reconcile: read back %s row %s: %w", j.prim.Name, store.Printable(a.pk), err)
	}
	if cell, ok := got.Latest(book, layout.QualCounted); !ok || !bytes.Equal(cell.Value, value) {
		rep.fail(KindCounter, j.prim.Name, a.pk, "the adopted Counted record is not visible when read back")
		return nil
	}
	c.Fixed++
	return nil
}
