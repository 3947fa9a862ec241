package write

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// grantFence grants holds that end an hour on, each at a time of its own,
// and remembers them, until it is told to refuse.
type grantFence struct {
	mu      sync.Mutex
	granted map[time.Time]bool
	refuse  bool
}

func (g *grantFence) Hold(context.Context) (time.Time, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refuse {
		return time.Time{}, errors.New("partitions gone")
	}
	until := time.Now().Add(time.Hour).Round(0).Add(time.Duration(len(g.granted)))
	g.granted[until.Round(0)] = true
	return until, nil
}

func (g *grantFence) holds(dl time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.granted[dl.Round(0)]
}

// fenceChecker fails the test for every write call whose context carries
// no deadline that the fence granted, and counts the calls by kind.
type fenceChecker struct {
	store.Store
	t     *testing.T
	fence *grantFence
	mu    sync.Mutex
	calls map[string]int
}

func (c *fenceChecker) check(ctx context.Context, kind, table string) {
	c.mu.Lock()
	c.calls[kind]++
	c.mu.Unlock()
	if dl, ok := ctx.Deadline(); !ok || !c.fence.holds(dl) {
		c.t.Errorf("%s to %s went out without a hold's deadline (deadline %v, %v)", kind, table, dl, ok)
	}
}

func (c *fenceChecker) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	c.check(ctx, "Batch", table)
	return c.Store.Batch(ctx, table, ms)
}

func (c *fenceChecker) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	c.check(ctx, "Mutate", table)
	return c.Store.Mutate(ctx, table, m)
}

func (c *fenceChecker) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	c.check(ctx, "Increment", table)
	return c.Store.Increment(ctx, table, inc)
}

func (c *fenceChecker) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	c.check(ctx, "CheckAndMutate", table)
	return c.Store.CheckAndMutate(ctx, table, cond, m)
}

func (c *fenceChecker) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.calls {
		n += k
	}
	return n
}

// generated is n events of a generated orders stream with renames and
// deletes.
func generated(t *testing.T, plan *schema.Plan, n int) []*event.Event {
	t.Helper()
	return genDecoded(t, plan, gen.OrdersOptions{Events: n, Seed: 7, Renames: 0.02, Deletes: 0.05})
}

// Every store call the writer makes to write goes out under a hold of its
// fence, with the hold's end as its deadline (row batches, reference rows
// among them, and fast counters' increments; a Mutate, which the writer no
// longer makes, would be checked too), and once the fence refuses,
// nothing is sent at all and the batch fails with ErrFenced, not as a
// refused event.
func TestFenceGuardsEveryWrite(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		plan  *schema.Plan
		kinds []string
	}{
		{"bounded counters", ordersPlan(t), []string{"Batch"}},
		{"fast counters", fastPlan(t), []string{"Batch", "Increment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.plan = tc.plan
			f.reset(t, ctx)
			fence := &grantFence{granted: map[time.Time]bool{}}
			chk := &fenceChecker{Store: f.ns, t: t, fence: fence, calls: map[string]int{}}
			w := New(tc.plan, withSyncOf(chk, f.st), Options{Fence: fence})
			evs := generated(t, tc.plan, 3000)
			for off := 0; off < 2000; off += 500 {
				if _, _, err := w.Apply(ctx, evs[off:off+500]); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range tc.kinds {
				if chk.calls[k] == 0 {
					t.Errorf("no %s call in 2,000 events: the test covers less than it says (%v)", k, chk.calls)
				}
			}

			fence.mu.Lock()
			fence.refuse = true
			fence.mu.Unlock()
			before := chk.total()
			_, rej, err := applyIsolating(ctx, w, evs[2000:])
			if !errors.Is(err, ErrFenced) {
				t.Fatalf("apply with the fence refusing: %v, want ErrFenced", err)
			}
			if len(rej) != 0 {
				t.Errorf("%d events rejected: a fence's refusal is no event's fault", len(rej))
			}
			if n := chk.total() - before; n != 0 {
				t.Errorf("%d write calls went out after the fence refused", n)
			}
		})
	}
}

// A hold that ends while a write is on its way fails the batch with
// ErrFenced: the call's context ends with the hold.
func TestFenceHoldEndsDuringWrite(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.reset(t, ctx)
	short := fenceFunc(func(context.Context) (time.Time, error) { return time.Now().Add(20 * time.Millisecond), nil })
	w := New(f.plan, withSyncOf(slowStore{f.ns}, f.st), Options{Fence: short})
	_, _, err := w.Apply(ctx, generated(t, f.plan, 50))
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("apply whose hold ended during a write: %v, want ErrFenced", err)
	}
	// An ended hold refuses before anything is sent.
	ended := fenceFunc(func(context.Context) (time.Time, error) { return time.Now().Add(-time.Second), nil })
	chk := &fenceChecker{Store: f.ns, t: t, fence: &grantFence{granted: map[time.Time]bool{}}, calls: map[string]int{}}
	w = New(f.plan, withSyncOf(chk, f.st), Options{Fence: ended})
	if _, _, err := w.Apply(ctx, generated(t, f.plan, 50)); !errors.Is(err, ErrFenced) {
		t.Fatalf("apply under a hold that had ended: %v, want ErrFenced", err)
	}
	if n := chk.total(); n != 0 {
		t.Errorf("%d write calls went out under a hold that had ended", n)
	}
}

type fenceFunc func(context.Context) (time.Time, error)

func (f fenceFunc) Hold(ctx context.Context) (time.Time, error) { return f(ctx) }

// slowStore's row batches wait for their context to end, as a call to a
// server that does not answer does.
type slowStore struct{ store.Store }

func (s slowStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("batch to %s: %w", table, ctx.Err())
}
