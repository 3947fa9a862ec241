package reconcile

import (
	"bytes"
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// live compares the live copies of a state with the reference rows of the
// lookup tables and rewrites stale ones at the reference's timestamp. It
// needs nothing but the entity's own row and the reference rows, so the
// part that reads the primary row decides it alone.
func (j *job) live(ctx context.Context, rep *Report, pk []byte, state *layout.State) error {
	// The keys alone: the cache locates a key's reference row only when
	// it reads it.
	refs, err := layout.LiveKeys(j.sp, j.ent, state.Values)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	c := rep.Kinds[KindLive]
	book := layout.BookFamily(j.prim)
	var ms []store.Mutation
	for i := range refs {
		lr := &refs[i]
		fam := lr.Lookup.Families[0].Name
		src, err := j.refs.get(ctx, j.st, lr)
		if err != nil {
			return err
		}
		rv, _ := layout.RefState(src, fam)
		for _, from := range lr.From {
			q := layout.LiveQualifier(lr.Ref, lr.Key, from)
			ref, ok := src.Latest(fam, layout.SourceQualifier(from))
			if !ok {
				// No value: without a reference state, there is nothing to
				// copy (readers show the snapshot value). With one (the
				// reference deleted, or the field left out at version rv),
				// no copy may show at or below rv: the writer masks them.
				if have, ok := state.Live.Get(q); ok && rv > 0 && have.Timestamp <= rv {
					c.Stale++
					ms = append(ms, store.Mutation{Kind: store.DeleteColumn, Family: book, Qualifier: q, Timestamp: rv})
				}
				continue
			}
			have, ok := state.Live.Get(q)
			switch {
			case !ok:
				c.Missing++
			case have.Timestamp > ref.Timestamp || (have.Timestamp == ref.Timestamp && bytes.Equal(have.Value, ref.Value)):
				c.Valid++
				continue
			default:
				c.Stale++
			}
			ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: q, Timestamp: ref.Timestamp, Value: append([]byte(nil), ref.Value...)})
		}
	}
	return j.fix(ctx, rep, KindLive, j.prim.Name, pk, ms)
}
