package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/denorm/denorm/store"
)

// Primary rows are read in chunks: one goroutine scans the next chunk while
// the workers derive the current one, each worker taking every n-th row, so
// a check is not waiting on the scan nor the scan on a check. A chunk is
// done when every worker is, so the checkpoint only ever names a key whose
// chunk is complete.

// defaultWorkers is the goroutines per chunk when Options.Workers is 0.
const defaultWorkers = 4

// checkpointEvery is how many primary rows a chunk holds.
const checkpointEvery = 1000

// scanChunks scans the primary rows of r and calls fn with each chunk, in
// key order.
func (j *job) scanChunks(ctx context.Context, r keyRange, fn func(rows []store.Row) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sc, err := j.st.Scan(ctx, j.prim.Name, store.Scan{Start: r.Start, Stop: r.Stop, Caching: checkpointEvery})
	if err != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, err)
	}
	defer sc.Close()
	chunks := make(chan []store.Row, 1)
	var scanErr error
	go func() {
		defer close(chunks)
		chunk := make([]store.Row, 0, checkpointEvery)
		var a arena
		for sc.Next(ctx) {
			chunk = append(chunk, a.copy(sc.Row()))
			if len(chunk) == checkpointEvery {
				select {
				case chunks <- chunk:
				case <-ctx.Done():
					return
				}
				chunk = make([]store.Row, 0, checkpointEvery)
				a = arena{} // the chunk keeps its blocks; the next one starts anew
			}
		}
		if scanErr = sc.Err(); scanErr == nil && len(chunk) > 0 {
			select {
			case chunks <- chunk:
			case <-ctx.Done():
			}
		}
	}()
	for chunk := range chunks {
		if err := fn(chunk); err != nil {
			cancel()
			for range chunks {
			}
			return err
		}
	}
	if scanErr != nil {
		return fmt.Errorf("reconcile: scan %s: %w", j.prim.Name, scanErr)
	}
	return ctx.Err()
}

// arena copies the rows of one chunk into a few large blocks instead of
// three allocations a cell: the chunk is dropped whole once checked. Only
// what a chunk's check keeps beyond it must be copied out (diff.go clones
// the primary keys it keeps).
type arena struct {
	b     []byte
	cells []store.Cell
}

const arenaBlock = 256 << 10

func (a *arena) bytes(p []byte) []byte {
	if cap(a.b)-len(a.b) < len(p) {
		a.b = make([]byte, 0, max(arenaBlock, len(p)))
	}
	n := len(a.b)
	a.b = append(a.b, p...)
	return a.b[n:len(a.b):len(a.b)]
}

func (a *arena) copy(r store.Row) store.Row {
	if cap(a.cells)-len(a.cells) < len(r.Cells) {
		a.cells = make([]store.Cell, 0, max(4096, len(r.Cells)))
	}
	out := store.Row{Key: a.bytes(r.Key)}
	n := len(a.cells)
	for _, c := range r.Cells {
		a.cells = append(a.cells, store.Cell{Row: out.Key, Family: c.Family, Qualifier: a.bytes(c.Qualifier), Timestamp: c.Timestamp, Value: a.bytes(c.Value)})
	}
	out.Cells = a.cells[n:len(a.cells):len(a.cells)]
	return out
}

// forEachRow calls fn for every row on n goroutines; goroutine g takes rows
// g, g+n, ..., so fn may keep state per g.
func forEachRow(ctx context.Context, n int, rows []store.Row, fn func(g int, row store.Row) error) error {
	return forEachIndex(n, len(rows), func(g, k int) error { return fn(g, rows[k]) })
}

// forEachIndex calls fn(g, k) for k in [0, count) on n goroutines, g
// being the goroutine's number (k mod n), so that fn may keep per-g
// results without locks.
func forEachIndex(n, count int, fn func(g, k int) error) error {
	n = max(1, min(n, count))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := g; k < count; k += n {
				if errs[g] = fn(g, k); errs[g] != nil {
					return
				}
			}
		}(g)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// forEach calls fn(0..count-1) on n goroutines and returns the first error.
func forEach(ctx context.Context, n, count int, fn func(k int) error) error {
	var mu sync.Mutex
	next := 0
	var first error
	var wg sync.WaitGroup
	for g := 0; g < max(1, min(n, count)); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				stop := first != nil || k >= count || ctx.Err() != nil
				mu.Unlock()
				if stop {
					return
				}
				if err := fn(k); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// A checkpoint (Options.Checkpoint) is the file of checkpoint.go, naming the
// last primary key done, and beside it (<file>.sums) the checksums and
// report of the rows up to it. A run resumed from both goes on where it
// stopped with the same result as one that never stopped; from the key
// alone (no or another sums file), it skips the rows up to the key
// without their checksums, so every range they reach is unequal and
// diffed: slower, never wrong.

// checkpointPeriod is the least time between two checkpoint writes: the
// sums file grows with the number of ranges.
const checkpointPeriod = 2 * time.Second

type checkpointSums struct {
	Plan   string  `json:"plan"` // Plan.ID: sums of another cut are useless
	Table  string  `json:"table"`
	Key    []byte  `json:"key"`
	Sums   accs    `json:"sums"`
	Report *Report `json:"report"`
}

// resume reads the checkpoint for the primary table and returns the key to
// start after (nil: from r's start), restoring the sums into w.
func (j *job) resume(r keyRange, w *worker) ([]byte, error) {
	key, err := readCheckpoint(j.opts.Checkpoint, j.prim.Name)
	if err != nil || key == nil || !r.contains(key) {
		return nil, err
	}
	if b, err := os.ReadFile(j.opts.Checkpoint + ".sums"); err == nil {
		var cs checkpointSums
		if json.Unmarshal(b, &cs) == nil && cs.Plan == j.plan.ID() && cs.Table == j.prim.Name && bytes.Equal(cs.Key, key) && len(cs.Sums) == len(w.exp) && cs.Report != nil {
			shaped := true
			for i := range cs.Sums {
				shaped = shaped && len(cs.Sums[i]) == len(w.exp[i])
			}
			if shaped {
				w.exp.add(cs.Sums)
				w.rep.Add(cs.Report)
			}
		}
	}
	j.lastCheckpoint = time.Now()
	return append(append([]byte(nil), key...), 0), nil
}

// checkpoint records that the rows up to last are done; unless force, at
// most once a checkpointPeriod.
func (j *job) checkpoint(last []byte, sum func() (accs, *Report), force bool) error {
	if j.opts.Checkpoint == "" || last == nil || (!force && time.Since(j.lastCheckpoint) < checkpointPeriod) {
		return nil
	}
	j.lastCheckpoint = time.Now()
	a, rp := sum()
	b, err := json.Marshal(checkpointSums{Plan: j.plan.ID(), Table: j.prim.Name, Key: last, Sums: a, Report: rp})
	if err != nil {
		return err
	}
	if err := writeFileAtomic(j.opts.Checkpoint+".sums", b); err != nil {
		return fmt.Errorf("reconcile: checkpoint: %w", err)
	}
	return writeCheckpoint(j.opts.Checkpoint, j.prim.Name, last)
}
