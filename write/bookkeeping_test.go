package write

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// bookkeeping lists what the model comparison leaves out on purpose, for
// primary and locator tables: a deleted entity's tombstone and the rows its
// locator lists, with every primary cell's version. Readers see none of it,
// but later events do (a late older event is judged stale against the
// tombstone and the listed rows), so a crash and a resume must leave the
// same as a run without the crash over the same batches. Left out: pending
// refs (a redo may record some a first attempt did not), bounded-counter
// records (positional), and live copies no reader uses (in a deleted row, or
// of a reference the entity dropped: which of those a delete marker masks
// depends on arrival order).
func bookkeeping(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan) string {
	var b strings.Builder
	for _, tbl := range p.Tables {
		if tbl.Role != schema.RolePrimary && tbl.Role != schema.RoleLocator && tbl.Role != schema.RoleCounter {
			continue
		}
		eachRow(t, ctx, st, tbl.Name, func(r store.Row) {
			var live map[string]bool // the live copies a reader would use
			if tbl.Role == schema.RolePrimary {
				live = testenv.EffectiveLive(t, p, tbl, r)
			}
			for _, c := range r.Cells {
				if bytes.Equal(c.Qualifier, layout.QualPending) || bytes.Equal(c.Qualifier, layout.QualCounted) ||
					layout.IsLive(c.Qualifier) && !live[string(c.Qualifier)] {
					continue
				}
				// A counter's state cells name streams and offsets (what
				// they merge to is below); a total of zero reads as none,
				// and whether a row counted into and out of within one
				// batch was written depends on the batch.
				if tbl.Role == schema.RoleCounter && (layout.IsCounterState(c.Qualifier) || bytes.Equal(c.Value, make([]byte, 8))) {
					continue
				}
				v := store.Printable(c.Value)
				if bytes.Equal(c.Qualifier, layout.QualMoved) {
					v = "(the writer's clock)" // when the batch ran, which a crash changes
				}
				fmt.Fprintf(&b, "%s %s %s:%s %s", tbl.Name, store.Printable(r.Key), c.Family, store.Printable(c.Qualifier), v)
				if tbl.Role == schema.RolePrimary {
					fmt.Fprintf(&b, " @%d", c.Timestamp)
				}
				b.WriteByte('\n')
			}
			if tbl.Role == schema.RoleCounter && tbl.Counter.Bounded() {
				cc, err := layout.ReadCounterCells(r, layout.CounterStateFamily(tbl))
				if err != nil {
					t.Fatal(err)
				}
				for _, tot := range cc.Merged().Totals {
					if tot.Value != 0 {
						fmt.Fprintf(&b, "%s %s total %s:%s %d\n", tbl.Name, store.Printable(r.Key), tot.Family, store.Printable(tot.Qualifier), tot.Value)
					}
				}
			}
		})
	}
	return b.String()
}

// lineDiff names the lines one listing has and the other lacks.
func lineDiff(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	var out []string
	for l := range w {
		if !g[l] {
			out = append(out, "missing: "+l)
		}
	}
	for l := range g {
		if !w[l] {
			out = append(out, "extra:   "+l)
		}
	}
	return strings.Join(out, "\n")
}

// A crash after any write and a resume over the same batches leave the
// bookkeeping of deleted entities as the run without the crash does: the
// tombstone in the primary row the delete names or the entity lived in, and
// the locator's list of rows; and the same counter totals. Histories with
// deletes and moves, in log order and shuffled with duplicates, with exact
// counters and with bounded ones (the events at positions of one stream, as
// a log gives them).
func TestCrashLeavesTheSameBookkeeping(t *testing.T) {
	t.Run("exact", func(t *testing.T) { crashBookkeeping(t, newFixture, false) })
	t.Run("bounded", func(t *testing.T) {
		crashBookkeeping(t, func(t testing.TB) *fixture {
			f := newFixture(t)
			f.plan = boundedPlan(t)
			return f
		}, true)
	})
}

func crashBookkeeping(t *testing.T, setup func(testing.TB) *fixture, positions bool) {
	ctx := context.Background()
	n := max(10, historyCount()/10)
	inShards(t, n, setup, func(t *testing.T, f *fixture, h int) {
		r := rand.New(rand.NewSource(int64(7000 + h)))
		evs := historyOf(r, 1+r.Intn(4), "", false)
		for _, arrival := range []struct {
			name string
			log  []*event.Event
		}{
			{"in log order", interleave(r, evs)},
			{"shuffled with duplicates", withDuplicates(r, append([]*event.Event(nil), evs...), evs)},
		} {
			log := arrival.log
			if positions {
				log = positioned(log, "file:events")
			}
			// The batches are drawn once: a batch that crashed is applied
			// again whole, so the runs differ by the crash alone. (Other
			// batch boundaries may leave other stale cells below an
			// entity's version, which nothing reads; the model comparison
			// covers them.)
			sizes := rand.New(rand.NewSource(int64(h)))
			var ends []int
			for off := 0; off < len(log); off = ends[len(ends)-1] {
				ends = append(ends, min(off+1+sizes.Intn(6), len(log)))
			}
			apply := func(budget int) (string, int) {
				f.reset(t, ctx)
				cs := &crashStore{Store: f.ns, budget: budget}
				w := New(f.plan, withSyncOf(cs, f.st), Options{})
				for i, off := 0, 0; i < len(ends); {
					if _, _, err := w.Apply(ctx, log[off:ends[i]]); errors.Is(err, errCrash) {
						cs.mu.Lock()
						cs.budget = -1 // the restarted process does not crash
						cs.mu.Unlock()
						continue
					} else if err != nil {
						t.Fatal(err)
					}
					off = ends[i]
					i++
				}
				return bookkeeping(t, ctx, f.ns, f.plan), cs.writes
			}
			want, total := apply(-1)
			for k := 0; k < total; k++ {
				if got, _ := apply(k); got != want {
					t.Fatalf("history %d, %s, crash after write %d of %d:\n%s", h, arrival.name, k, total, lineDiff(want, got))
				}
			}
		}
	})
}
