package write

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
)

// liveSources reads the lookup tables' reference rows that the batch's new
// states need: a state that starts to reference a key copies the
// reference's latest values from there. Keyed by lookup table and row.
func (w *Writer) liveSources(ctx context.Context, plans []*entityPlan) (map[string]store.Row, error) {
	need := map[string]layout.LiveRef{}
	for _, ep := range plans {
		for _, lr := range w.newLiveRefs(ep) {
			need[lr.Lookup.Name+"\x00"+string(lr.Row)] = lr
		}
	}
	if len(need) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(need))
	for k := range need {
		keys = append(keys, k)
	}
	// Sorted, so each lookup table's rows are together: one getRows each.
	sort.Strings(keys)
	out := make(map[string]store.Row, len(keys))
	for lo := 0; lo < len(keys); {
		table := need[keys[lo]].Lookup.Name
		hi := lo
		var rows [][]byte
		for hi < len(keys) && need[keys[hi]].Lookup.Name == table {
			rows = append(rows, need[keys[hi]].Row)
			hi++
		}
		got, err := w.getRows(ctx, table, rows)
		if err != nil {
			return nil, fmt.Errorf("write: read reference rows of %s: %w", table, err)
		}
		for k, row := range got {
			out[keys[lo+k]] = row
		}
		lo = hi
	}
	return out, nil
}

// newLiveRefs lists the live references of an entity's final state that
// its stored state lacks (all of them on a redo, when the copies written
// may have been lost).
func (w *Writer) newLiveRefs(ep *entityPlan) []layout.LiveRef {
	if !ep.liveDone {
		ep.live, ep.liveDone = w.computeLiveRefs(ep), true
	}
	return ep.live
}

func (w *Writer) computeLiveRefs(ep *entityPlan) []layout.LiveRef {
	if ep.derived == nil || ep.deleted {
		return nil
	}
	final := ep.g.events[len(ep.g.events)-1]
	for _, p := range ep.g.events {
		if p.ev.Version == ep.version && p.derived != nil {
			final = p
		}
	}
	refs, err := layout.LiveKeys(w.plan, ep.g.ent, final.ev.State)
	if err != nil || len(refs) == 0 {
		return nil
	}
	// A row the entity just moved to holds none of its copies yet.
	all := ep.stored == nil || ep.redo || !ep.writePrimary || !bytes.Equal(ep.g.at, ep.key)
	var prev []layout.LiveRef
	if st := ep.g.state; !all && st != nil && st.Values != nil {
		prev, _ = layout.LiveKeys(w.plan, ep.g.ent, st.Values)
	}
	// Both lists are sorted by reference and key: walked together, the
	// keys the stored state held already drop out, and only the new ones
	// are located (worked out their lookup rows).
	out := refs[:0]
	j := 0
	for _, r := range refs {
		if !all {
			for j < len(prev) && liveCompare(prev[j], r) < 0 {
				j++
			}
			if j < len(prev) && liveCompare(prev[j], r) == 0 {
				continue
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 || layout.LocateAll(out) != nil {
		return nil
	}
	return out
}

// liveCompare orders live references as LiveKeys sorts them.
func liveCompare(a, b layout.LiveRef) int {
	if c := strings.Compare(a.Ref.Name, b.Ref.Name); c != 0 {
		return c
	}
	return bytes.Compare(a.Key, b.Key)
}

// liveMutations copies the reference rows' values into an entity's primary
// row, each at the reference's version.
func (w *Writer) liveMutations(ep *entityPlan, live map[string]store.Row, stats *Stats) []store.Mutation {
	var ms []store.Mutation
	book := layout.BookFamily(ep.g.prim)
	// The copies' qualifiers are cut from one buffer, each capped at its
	// length; the sources' are looked up from one on the stack.
	var qbuf []byte
	var src [64]byte
	// Copies of references the entity no longer holds stay, unrefreshed
	// (their lookup rows are gone): readers only consult the copies of the
	// references a state holds. Deleting them would mask the same version
	// if the entity referenced the key again.
	for _, lr := range w.newLiveRefs(ep) {
		row, ok := live[lr.Lookup.Name+"\x00"+string(lr.Row)]
		if !ok {
			continue
		}
		fam := lr.Lookup.Families[0].Name
		rv, _ := layout.RefState(row, fam)
		for _, from := range lr.From {
			if n := layout.LiveQualifierLen(lr.Ref, lr.Key, from); cap(qbuf)-len(qbuf) < n {
				qbuf = make([]byte, 0, max(256, n))
			}
			start := len(qbuf)
			qbuf = layout.AppendLiveQualifier(qbuf, lr.Ref, lr.Key, from)
			q := qbuf[start:len(qbuf):len(qbuf)]
			if c, ok := row.Latest(fam, layout.AppendSourceQualifier(src[:0], from)); ok {
				ms = append(ms, store.Mutation{Kind: store.Put, Family: book, Qualifier: q, Timestamp: c.Timestamp, Value: c.Value})
				stats.Cells[ep.g.prim.Name]++
			} else if rv > 0 {
				// The reference, at its newest version, has no such value
				// (deleted, or the field left out): mask any older copy an
				// interrupted write left in this row.
				ms = append(ms, store.Mutation{Kind: store.DeleteColumn, Family: book, Qualifier: q, Timestamp: rv})
				stats.Deletes[ep.g.prim.Name]++
			}
		}
	}
	return ms
}

// each runs fn for 0..n-1 on the writer's readers and returns the first
// error.
func (w *Writer) each(ctx context.Context, n int, fn func(context.Context, int) error) error {
	return eachOn(ctx, w.opts.Readers, n, fn)
}

// eachOn runs fn for 0..n-1, width calls at a time, and returns the first
// error; after one, the calls still to come see a cancelled context, and
// those not started are not made. Workers take the next index from a
// counter, not a channel: a batch hands out thousands of small calls, and a
// channel send per call costs a goroutine hand-off each. The caller's
// goroutine is one of the workers.
func eachOn(ctx context.Context, width, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := ctx.Done()
	var next atomic.Int64
	var once sync.Once
	var first error
	run := func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}
	}
	var wg sync.WaitGroup
	for r := 1; r < width && r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	run()
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}
