package hbase

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// Limits of one putMultiple or deleteMultiple call. They keep a request
// well under the gateway's frame limit when it runs framed (2 MiB by
// default), bound the work redone if the call fails, and cut a flush into
// enough calls to use every pooled connection.
const (
	multiMaxBytes = 256 << 10
	multiMaxRows  = 1000
)

// Batch applies many row mutations, each atomic on its row. Rows whose
// mutation is a single put go out together in putMultiple calls, rows whose
// mutation is a single delete in deleteMultiple calls, and the rest each in
// its own mutateRow. A multi call reports only that something failed, so
// after a failure its rows are retried one by one to learn each row's
// result; with explicit timestamps, applying a mutation twice is harmless.
//
// Mutations of one row keep their order: the batch is cut into segments in
// which no row repeats, and segments run one after another.
func (s *Store) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	errs := make([]error, len(ms))
	if s.closed.Load() {
		return errs, store.ErrClosed
	}
	plans := make([]plan, len(ms))
	ready := make([]int, 0, len(ms))
	n := 0
	for _, m := range ms {
		n += len(m.Mutations)
	}
	slab := newPlanSlab(n)
	for i, m := range ms {
		err := checkCells(table, m, s.opts.MaxCellSize)
		var p plan
		if err == nil {
			p, err = planMutation(m, s.opts.Durability, slab)
		}
		if err != nil {
			errs[i] = fmt.Errorf("hbase: batch: mutate row %s of %s: %w", store.Printable(m.Row), table, err)
			continue
		}
		plans[i] = p
		ready = append(ready, i)
	}
	for len(ready) > 0 {
		seen := map[string]bool{}
		n := 0
		for n < len(ready) && !seen[string(ms[ready[n]].Row)] {
			seen[string(ms[ready[n]].Row)] = true
			n++
		}
		if err := s.segment(ctx, table, ms, plans, ready[:n], errs); err != nil {
			return errs, err
		}
		ready = ready[n:]
	}
	return errs, nil
}

// segment applies mutations of distinct rows. It returns an error only for
// a failure of the whole call (a missing table, a closed store, a cancelled
// context).
func (s *Store) segment(ctx context.Context, table string, ms []store.RowMutation, plans []plan, idx []int, errs []error) error {
	var puts, dels, rows []int
	for _, i := range idx {
		p := plans[i]
		switch {
		case p.put == nil && len(p.deletes) == 0:
		case p.single() && p.put != nil:
			puts = append(puts, i)
		case p.single():
			dels = append(dels, i)
		default:
			rows = append(rows, i)
		}
	}
	name := s.wireName(table)
	// Multi calls of one segment touch distinct rows, so they may run side
	// by side, one per pooled connection.
	type call struct {
		chunk []int
		what  string
		rpc   rpcFunc
	}
	var calls []call
	for _, chunk := range chunks(puts, ms) {
		tputs := make([]*hbase2.TPut, len(chunk))
		for k, i := range chunk {
			tputs[k] = plans[i].put
		}
		calls = append(calls, call{chunk, "put rows", func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
			return c.PutMultiple(ctx, name, tputs)
		}})
	}
	for _, chunk := range chunks(dels, ms) {
		tdels := make([]*hbase2.TDelete, len(chunk))
		for k, i := range chunk {
			tdels[k] = plans[i].deletes[0]
		}
		calls = append(calls, call{chunk, "delete rows", func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
			_, err := c.DeleteMultiple(ctx, name, tdels)
			return err
		}})
	}
	failed := make([]error, len(calls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.opts.PoolSize)
	for k, c := range calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			failed[k] = s.call(ctx, c.rpc)
		}()
	}
	wg.Wait()
	var singles []int // rows to send one by one
	for k, err := range failed {
		if err == nil {
			continue
		}
		if fatal := s.whole(ctx, calls[k].what, table, err); fatal != nil {
			return fatal
		}
		singles = append(singles, calls[k].chunk...)
	}
	singles = append(singles, rows...)
	return s.oneByOne(ctx, table, ms, plans, singles, errs)
}

// whole returns a wrapped error when a failed multi call means the whole
// batch cannot succeed, and nil when rows should be retried one by one.
func (s *Store) whole(ctx context.Context, what, table string, err error) error {
	if _, fromServer := serverMessage(err); !fromServer {
		return fmt.Errorf("hbase: batch: %s of %s: %w", what, table, err)
	}
	if e := s.explain(ctx, what+" of "+table, table, nil, err); errors.Is(e, store.ErrTableNotFound) {
		return e
	}
	return nil
}

// oneByOne sends each row on its own, as many at once as the pool allows.
func (s *Store) oneByOne(ctx context.Context, table string, ms []store.RowMutation, plans []plan, idx []int, errs []error) error {
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < min(s.opts.PoolSize, len(idx)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := s.apply(ctx, table, ms[i].Row, plans[i]); err != nil {
					what := fmt.Sprintf("batch: mutate row %s of %s", store.Printable(ms[i].Row), table)
					errs[i] = s.explain(ctx, what, table, ms[i].Row, err)
				}
			}
		}()
	}
	for _, i := range idx {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, i := range idx {
		if errs[i] != nil && (errors.Is(errs[i], store.ErrTableNotFound) || errors.Is(errs[i], store.ErrClosed)) {
			return errs[i]
		}
	}
	return ctx.Err()
}

// chunks cuts row indexes into groups within the multi-call limits.
func chunks(idx []int, ms []store.RowMutation) [][]int {
	var out [][]int
	start, size := 0, 0
	for k, i := range idx {
		sz := ms[i].Size()
		if k > start && (size+sz > multiMaxBytes || k-start >= multiMaxRows) {
			out = append(out, idx[start:k])
			start, size = k, 0
		}
		size += sz
	}
	if start < len(idx) {
		out = append(out, idx[start:])
	}
	return out
}
