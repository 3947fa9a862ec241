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
// (bounded.go), and the writer records, with every state it writes, the
// counts that state derives. A record can say otherwise only when the
// counter changed under it: an entity written before the counter was
// declared (a counter added to a running schema) has no count for it, one
// written before a when was added to it still counts where its state no
// longer does. Replaying the log would not mend either: the writer skips
// the versions it has. So the diff re-records such an entity: where a live
// entity's record holds, in a cell the group covers, a count other than
// its state's (none when it names no such cell), and holds it for good
// (Base equal to Now: not a batch in flight), the record gets the state's
// count with Base equal to Now, by a check-and-mutate on the record as
// read. The totals are left as they are: the next run finds them off from
// what the records say and corrects them, as any drift.
//
// Why not correct the totals in the same run: a writer may have read the
// entity's record before the rewrite and write its batch after it. It took
// the old count for what the totals hold, so it adds its own change from
// there, and writes a newer record that hides the rewritten one; a
// correction by this run would then be made twice. By the next run that
// writer has written (runs are minutes apart, a batch takes seconds), so
// the records it reads are the ones the totals follow: the hidden rewrite
// counts for nothing, and a writer that read the rewritten record changed
// the totals only by its own change (docs/writer.md, Lemmas 2 and 3).
// TestAdoptionWithConcurrentWriter caught the same-run version, under
// -race, counting such entities twice.
//
// A writer that wrote a new record before the check-and-mutate recorded
// the entity itself: the check fails, and nothing is rewritten. The writer
// gives an entity that counts nothing an empty record whenever it writes
// its row, so that every write changes the record. (Without the check the
// put, at the old record's timestamp, would lie under the newer record,
// and the read-back would find it hidden.)

// adoption is one live entity whose record the diff rewrites.
type adoption struct {
	pk      []byte          // its primary row
	record  *layout.Counted // its record as read (nil: none)
	cell    store.Cell      // the record's cell as read, when hasCell
	hasCell bool
	version int64          // its state's version
	counts  []layout.Count // the counts to record, Base equal to Now (0: none)
	// missing and stale count the cells the record does not name and
	// those it names with another count.
	missing, stale int64
}

// recount lists, for the cells kept reports the diff covers, the counts of
// a live entity's state that its record holds otherwise, with how many it
// does not name (missing) and how many it names with another count
// (stale). It lists none while the record holds a count in flight.
func recount(st *layout.State, incs []layout.Increment, kept func(table string, row []byte) bool, share func(*layout.Counted, layout.Ref) (int64, bool)) (counts []layout.Count, missing, stale int64) {
	var want []layout.Count // the state's counts, by ref
	for _, in := range incs {
		if !in.Bounded || in.Delta == 0 || !kept(in.Table, in.Row) {
			continue
		}
		ref := layout.Ref{Table: in.Table, Row: in.Row, Family: in.Family, Qualifier: in.Qualifier}
		i, found := slices.BinarySearchFunc(want, ref, func(c layout.Count, r layout.Ref) int { return c.Compare(r) })
		if !found {
			want = slices.Insert(want, i, layout.Count{Ref: ref})
		}
		want[i].Now += in.Delta
	}
	if st.Counted != nil {
		for _, c := range st.Counted.Counts {
			if !kept(c.Table, c.Row) {
				continue
			}
			if i, found := slices.BinarySearchFunc(want, c.Ref, func(x layout.Count, r layout.Ref) int { return x.Compare(r) }); !found {
				want = slices.Insert(want, i, layout.Count{Ref: c.Ref})
			}
		}
	}
	for _, w := range want {
		has, known := share(st.Counted, w.Ref)
		if !known {
			return nil, 0, 0 // a batch in flight: its replay decides
		}
		if has == w.Now {
			continue
		}
		if has == 0 {
			missing++
		} else {
			stale++
		}
		ref := w.Ref
		ref.Row, ref.Qualifier = bytes.Clone(ref.Row), bytes.Clone(ref.Qualifier)
		counts = append(counts, layout.Count{Ref: ref, Base: w.Now, Now: w.Now})
	}
	return counts, missing, stale
}

// newAdoption keeps what adopting an entity's counts needs of its row,
// cloned: the row belongs to the scan's chunk.
func newAdoption(row store.Row, st *layout.State, book string, counts []layout.Count, missing, stale int64) adoption {
	a := adoption{pk: bytes.Clone(row.Key), record: st.Counted, version: st.Version, counts: counts, missing: missing, stale: stale}
	if c, ok := row.Latest(book, layout.QualCounted); ok {
		a.cell, a.hasCell = store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Timestamp: c.Timestamp, Value: bytes.Clone(c.Value)}, true
	}
	return a
}

// adopt reports what an entity's record holds otherwise than its state
// and, in a repair, rewrites the record with the state's counts.
func (j *job) adopt(ctx context.Context, rep *Report, a adoption) error {
	c := rep.Kinds[KindCounter]
	c.Missing += a.missing
	c.Stale += a.stale
	if j.opts.DryRun {
		return nil
	}
	rec := &layout.Counted{}
	if a.record != nil {
		rec.Stream, rec.Offset = a.record.Stream, a.record.Offset
		rec.Counts = slices.Clone(a.record.Counts)
	}
	for _, n := range a.counts {
		i, found := slices.BinarySearchFunc(rec.Counts, n.Ref, func(x layout.Count, r layout.Ref) int { return x.Compare(r) })
		switch {
		case n.Now == 0 && found:
			rec.Counts = slices.Delete(rec.Counts, i, i+1) // no count has Base and Now both zero
		case found:
			rec.Counts[i] = n
		case n.Now != 0:
			rec.Counts = slices.Insert(rec.Counts, i, n)
		}
	}
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
		rep.fail(KindCounter, j.prim.Name, a.pk, "the rewritten Counted record is not visible when read back")
		return nil
	}
	c.Fixed++
	return nil
}
