package read

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// verify resolves thin index hits to their primary rows. A hit counts only
// when the primary row, as it stands, still derives exactly that index row:
// the writer deletes old index rows after it writes the primary row, so an
// index row can outlive the state it came from (a crash, a slow writer).
//
// The checks run in parts side by side (see checkParts); what they found is
// then taken in the hits' order, so the page, its log lines and its repairs
// are the same whatever the parts.
func (r *Reader) verify(ctx context.Context, qq *query, hits []store.Row, repair bool, res *Result) error {
	checks := make([]hitCheck, len(hits))
	if err := r.checkParts(ctx, qq, hits, checks); err != nil {
		return err
	}
	for i, h := range hits {
		c := &checks[i]
		if c.ok {
			res.Rows = append(res.Rows, c.vals)
			continue
		}
		res.DroppedStale++
		r.log.Info("stale index hit dropped", "query", qq.q.Name, "table", qq.t.Name, "row", store.Printable(h.Key), "reason", c.why)
		if !repair {
			continue
		}
		ts := hitTimestamp(h, c.ref, c.hasRef)
		ms := make([]store.Mutation, 0, len(qq.t.Families))
		for _, f := range qq.t.Families {
			ms = append(ms, store.Mutation{Kind: store.DeleteFamily, Family: f.Name, Timestamp: ts})
		}
		if err := r.st.Mutate(ctx, qq.t.Name, store.RowMutation{Row: h.Key, Mutations: ms}); err != nil {
			return fmt.Errorf("read: query %s: repairing %s row %s: %w", qq.q.Name, qq.t.Name, store.Printable(h.Key), err)
		}
		res.Repaired++
		r.log.Info("stale index row deleted", "query", qq.q.Name, "table", qq.t.Name, "row", store.Printable(h.Key), "at", ts)
	}
	return nil
}

// hitCheck is what checking one hit found.
type hitCheck struct {
	ref    store.Cell // the hit's ref cell, when it has one
	hasRef bool
	ok     bool           // the primary row still derives the hit
	vals   map[string]any // the entity, when ok
	why    string         // why not, when not ok
}

// minPartHits is the fewest hits a part of a page is checked with. A part
// costs a goroutine and a multi-get of its own; below a few dozen rows that
// is more than the part saves.
const minPartHits = 32

// checkParts checks the hits in parts of consecutive hits at once, each
// with its own multi-get, on a store where each part is a round trip of its
// own (HBase, where a page of 100 hits took 14% less time in two parts than
// in one). On the embedded store two cores checked two parts no faster than
// one (docs/BENCHMARKS.md), so a page is one part there.
func (r *Reader) checkParts(ctx context.Context, qq *query, hits []store.Row, checks []hitCheck) error {
	parts := r.parts
	switch {
	case parts > 0:
	case r.local:
		parts = 1
	default:
		parts = runtime.GOMAXPROCS(0)
	}
	parts = min(parts, len(hits)/minPartHits)
	if parts <= 1 {
		return r.checkHits(ctx, qq, hits, checks)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(hits)/parts, (p+1)*len(hits)/parts
		wg.Go(func() { errs[p] = r.checkHits(ctx, qq, hits[lo:hi], checks[lo:hi]) })
	}
	wg.Wait()
	return firstError(errs)
}

// checkHits checks hits, reading their primary rows with one multi-get, and
// puts what it found of hits[i] in checks[i].
func (r *Reader) checkHits(ctx context.Context, qq *query, hits []store.Row, checks []hitCheck) error {
	primaries, err := r.fetchPrimaries(ctx, qq, hits)
	if err != nil {
		return err
	}
	var sc layout.Scratch // one hit's index row keys at a time
	for i, h := range hits {
		c := &checks[i]
		c.ref, c.hasRef = h.Latest(qq.t.Ref.Family, []byte(qq.t.Ref.Qualifier))
		if !c.hasRef {
			c.why = "no ref cell"
			continue
		}
		c.vals, c.ok, c.why, err = r.checkHit(qq, h.Key, primaries[string(c.ref.Value)], &sc)
		if err != nil {
			return err
		}
	}
	return nil
}

// hitTimestamp is the version the stale entry was written at: the ref cell's
// timestamp, or without one the newest cell of the row. Deleting at it (never
// later) leaves any newer put of the same row standing.
func hitTimestamp(h store.Row, ref store.Cell, hasRef bool) int64 {
	if hasRef {
		return ref.Timestamp
	}
	var ts int64
	for _, c := range h.Cells {
		ts = max(ts, c.Timestamp)
	}
	return ts
}

// checkHit reports whether the primary row derives the index row key, and
// returns the entity's fields when it does.
func (r *Reader) checkHit(qq *query, key []byte, prim store.Row, sc *layout.Scratch) (map[string]any, bool, string, error) {
	if prim.Empty() {
		return nil, false, "primary row is gone", nil
	}
	st, err := layout.ReadStateSkipping(r.plan, qq.ent, qq.primary, prim, layout.SkipBookkeeping)
	if err != nil {
		return nil, false, "", fmt.Errorf("read: query %s: %w", qq.q.Name, err)
	}
	if !st.Exists() {
		return nil, false, "entity is deleted", nil
	}
	found, err := sc.DerivesRow(r.plan, qq.ent, qq.t, st.Values, key)
	if err != nil {
		return nil, false, "", fmt.Errorf("read: query %s: deriving index rows: %w", qq.q.Name, err)
	}
	if !found {
		return nil, false, "primary row no longer derives this index row", nil
	}
	if err := r.applyLive(qq.ent, st); err != nil {
		return nil, false, "", err
	}
	return st.Values, true, "", nil
}

// fetchPrimaries reads, once each and in one multi-get, the primary rows
// the hits point at: a page of 100 thin hits is one round trip on HBase
// and one iterator on the embedded store, not 100 Gets.
func (r *Reader) fetchPrimaries(ctx context.Context, qq *query, hits []store.Row) (map[string]store.Row, error) {
	// Sized for a hit per primary row, the usual page: a map grown from
	// empty rehashes its keys several times on the way to a hundred.
	gets := make([]store.Get, 0, len(hits))
	primaries := make(map[string]store.Row, len(hits))
	for _, h := range hits {
		ref, ok := h.Latest(qq.t.Ref.Family, []byte(qq.t.Ref.Qualifier))
		if !ok {
			continue
		}
		if _, seen := primaries[string(ref.Value)]; !seen {
			primaries[string(ref.Value)] = store.Row{}
			gets = append(gets, store.Get{Row: ref.Value})
		}
	}
	rows, err := store.GetMany(ctx, r.st, qq.primary.Name, gets)
	if err != nil {
		return nil, fmt.Errorf("read: query %s: primary rows of %d index hits: %w", qq.q.Name, len(gets), err)
	}
	for i, g := range gets {
		primaries[string(g.Row)] = rows[i]
	}
	return primaries, nil
}
