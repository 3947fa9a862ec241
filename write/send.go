package write

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/denorm/denorm/store"
)

// batch writes row mutations in chunks and fails on the first row that
// failed: the caller retries the whole batch, which is idempotent. The
// chunks go out side by side, Readers at a time: each row is whole in one
// chunk, so no row's atomicity depends on another's. On a store with one
// local log (a store.Syncer: the embedded store), a call is a commit this
// process does on one core, so a table's batch is cut into at least Readers
// chunks (of minCallRows rows or more), that one large table does not
// write on one core while the other waits. A remote store cuts its calls
// into requests of its own and sends them side by side already; more
// calls would only add to the server's work per call.
func (w *Writer) batch(ctx context.Context, table string, ms []store.RowMutation) error {
	return w.send(ctx, table, ms, w.opts.Readers)
}

// batchInTurn is batch with its calls one after another, for the writes of
// a live-copy refresh: the refreshes of a batch's referenced keys already
// run side by side, and cutting each fan-out (tens of thousands of rows in
// a grown store) again would put eight times the commits in flight for no
// gain that a growth run could measure (docs/BENCHMARKS.md, seventh
// session).
func (w *Writer) batchInTurn(ctx context.Context, table string, ms []store.RowMutation) error {
	return w.send(ctx, table, ms, 1)
}

// send is batch with width calls at a time.
func (w *Writer) send(ctx context.Context, table string, ms []store.RowMutation, width int) error {
	dur := w.durability(table)
	for i := range ms {
		ms[i].Durability = dur
	}
	rows := w.opts.BatchRows
	if store.Local(w.st) && width > 1 {
		rows = min(rows, max(minCallRows, (len(ms)+width-1)/width))
	}
	var cuts []int
	for start, end := 0, 0; start < len(ms); start = end {
		end = w.chunkEnd(ms, start, rows)
		cuts = append(cuts, end)
	}
	return eachOn(ctx, width, len(cuts), func(ctx context.Context, k int) error {
		start, end := 0, cuts[k]
		if k > 0 {
			start = cuts[k-1]
		}
		var errs []error
		err := w.fenced(ctx, func(ctx context.Context) (err error) {
			errs, err = w.st.Batch(ctx, table, ms[start:end])
			return err
		})
		if err != nil {
			return fmt.Errorf("write: batch of %d rows to %s: %w", end-start, table, err)
		}
		for j, e := range errs {
			if e != nil {
				return fmt.Errorf("write: row %s of %s: %w", store.Printable(ms[start+j].Row), table, e)
			}
		}
		return nil
	})
}

// minCallRows is the fewest rows batch puts in a store call when it cuts a
// table's rows for side-by-side calls: below it, a call's fixed cost (a
// commit, a round trip) outweighs what running it beside others saves.
const minCallRows = 64

// chunkEnd returns where the store Batch call that starts at ms[start]
// ends: after rows rows, or before the row that would take it past
// BatchBytes. It always takes at least one row.
func (w *Writer) chunkEnd(ms []store.RowMutation, start, rows int) int {
	end, size := start, 0
	for end < len(ms) && end-start < rows {
		n := ms[end].Size()
		if end > start && size+n > w.opts.BatchBytes {
			break
		}
		size += n
		end++
	}
	return end
}

// durability is what a table's mutations are sent with: the schema's
// setting, except that sync_wal becomes async_wal plus one Sync at the end
// of the batch on stores that can sync their whole log at once.
func (w *Writer) durability(table string) store.Durability {
	d := store.DurabilityDefault
	if t := w.plan.Table(table); t != nil {
		if pd, ok := store.ParseDurability(t.Durability); ok {
			d = pd
		}
	}
	if _, ok := w.st.(store.Syncer); ok && d == store.SyncWAL {
		return store.AsyncWAL
	}
	return d
}

// deferSync reports whether some table's sync_wal writes wait for the
// final Sync.
func (w *Writer) deferSync() bool {
	for _, t := range w.plan.Tables {
		if d, _ := store.ParseDurability(t.Durability); d == store.SyncWAL {
			return true
		}
	}
	return false
}

// parallel runs fn for every table at once and returns the first error.
func (w *Writer) parallel(ctx context.Context, tables []string, fn func(context.Context, string) error) error {
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, t := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(ctx, t)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// both runs a and b at once and returns their errors, joined.
func both(ctx context.Context, a, b func(context.Context) error) error {
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		errB = b(ctx)
	}()
	errA := a(ctx)
	<-done
	return errors.Join(errA, errB)
}
