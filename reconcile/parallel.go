package reconcile

import (
	"context"
	"sync"

	"github.com/denorm/denorm/store"
)

// Entities are checked in chunks of primary rows, each chunk on several
// goroutines: a check is mostly waiting on store reads. Each goroutine works
// on a fork of the job (its own report and sets), merged when the chunk is
// done, so the checkpoint only ever names a key whose chunk is complete.

// defaultWorkers is the goroutines per chunk when Options.Workers is 0.
const defaultWorkers = 4

// fork is a copy of the job with empty report and sets of its own.
func (j *job) fork() *job {
	w := *j
	w.rep = newReport(j.opts.DryRun)
	w.pending = nil
	if j.whole {
		w.sums, w.entities = map[string]*fastSum{}, map[string][]byte{}
	}
	return &w
}

// join merges a fork's findings into the job.
func (j *job) join(w *job) {
	j.rep.Add(w.rep)
	j.pending = append(j.pending, w.pending...)
	if !j.whole {
		return
	}
	for k, v := range w.entities {
		j.entities[k] = v
	}
	for k, fs := range w.sums {
		if have := j.sums[k]; have != nil {
			have.Sum += fs.Sum
		} else {
			j.sums[k] = fs
		}
	}
}

// checkChunk checks the entities of a chunk of primary rows.
func (j *job) checkChunk(ctx context.Context, rows []store.Row) error {
	if err := j.checkRows(ctx, rows); err != nil {
		return err
	}
	for _, e := range j.pending {
		j.derived[e.item.ID()] = e
	}
	j.pending = j.pending[:0]
	return nil
}

func (j *job) checkRows(ctx context.Context, rows []store.Row) error {
	n := j.opts.Workers
	if n <= 0 {
		n = defaultWorkers
	}
	n = min(n, len(rows))
	if n <= 1 {
		for _, r := range rows {
			if err := j.entity(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}
	forks := make([]*job, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range forks {
		forks[i] = j.fork()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := i; k < len(rows); k += n {
				if errs[i] = forks[i].entity(ctx, rows[k]); errs[i] != nil {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	for i, w := range forks {
		if errs[i] != nil {
			return errs[i]
		}
		j.join(w)
	}
	return nil
}
