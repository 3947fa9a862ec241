package reconcile

import (
	"context"
	"time"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Options say what a run covers and whether it repairs.
type Options struct {
	// Table is the primary table to reconcile; "" means every primary table.
	Table string
	// Shard, when N > 1, makes a single-process run one of N: it reads
	// every primary row, and compares the derived ranges dealt to it (range
	// j to shard j mod N), so that each shard's result is final alone and
	// the N together check every copy once. Live copies are checked, and
	// rows counted, for the shard's own part of the primary table.
	Shard Shard
	// DryRun reports differences without repairing them.
	DryRun bool
	// Since, when set, limits the counter check to counter rows whose key's
	// time part is at or after it (see window.go); index, lookup and live
	// copies are checked whole. A plan freezes it (PlanOptions.Since).
	Since time.Time
	// Checkpoint is a file holding the last primary key done; "" for none.
	Checkpoint string
	// Workers is how many goroutines check entities; 0 means 4.
	Workers int
	// Rate caps the rows read per second (scans and Gets); 0: no cap.
	Rate float64
	// PurgeMarkers: when a repair is masked by a delete marker, major-
	// compact the table (once per run) and repair again. Meant for the
	// embedded store, whose compaction is done when the call returns.
	PurgeMarkers bool
	// WritersStopped: no writer writes the schema's tables while the job
	// runs. A bounded counter row that an entity moved in the last minute
	// counts in is then repaired in this run, not left to a later one
	// (bounded.go, "Moves under way").
	WritersStopped bool
	// DiffCells caps the cells one diff pass keeps; 0 means 100,000.
	DiffCells int
	// Plan sets how a single-process run cuts its ranges (Parts is the
	// shard count).
	Plan PlanOptions
	// Progress, when set, is called as a run goes on.
	Progress func(Progress)
	// Clock is the time, in milliseconds since the epoch, that TTLs are
	// measured against (expiry.go); nil means the system clock.
	Clock func() int64
}

// Progress is where a run is.
type Progress struct {
	Part  int    `json:"part"`
	Phase string `json:"phase"` // plan, primary, derived, diff
	Table string `json:"table"`
	Rows  int64  `json:"rows"` // rows of the phase done so far
}

// Run reconciles the copies of the primary tables of plan in st in one
// process: it plans, runs the part (the shard's, or the only one), and
// merges, diffing the unequal ranges. A run of one part cuts its ranges
// from the derived tables' stored rows (cut.go); a shard of several
// samples the primary table for a plan every shard agrees on.
func Run(ctx context.Context, plan *schema.Plan, st store.Store, opts Options) (*Report, error) {
	ms := newMetered(st, opts.Rate)
	po := opts.Plan
	po.Parts = max(1, opts.Shard.N)
	po.Table, po.Since = opts.Table, opts.Since
	if opts.Progress != nil {
		opts.Progress(Progress{Part: opts.Shard.I, Phase: "plan"})
	}
	// One part: its ranges are cut from the stored side as it goes, which
	// saves the sampling scan of the primary table. Shards must agree on
	// their ranges beforehand: they sample, as a plan for several parts does.
	cut := 0
	if po.Parts == 1 {
		cut = po.RangeRows
		if cut <= 0 {
			cut = defaultRangeRows
		}
	}
	p, err := newPlan(ctx, plan, ms, po, cut == 0)
	if err != nil {
		return nil, err
	}
	part, err := runPart(ctx, plan, ms, p, opts.Shard.I, opts, true, cut)
	if err != nil {
		return nil, err
	}
	rep, err := merge(ctx, plan, ms, p, []*Partial{part}, opts, false)
	if err != nil {
		return nil, err
	}
	// merge counted every read of ms, the plan's and the part's too.
	rep.RowsRead, rep.Gets = ms.Reads(), ms.Gets()
	// Finished: the next run starts from the beginning.
	if err := removeCheckpoint(opts.Checkpoint); err != nil {
		return rep, err
	}
	if opts.Checkpoint != "" {
		if err := removeCheckpoint(opts.Checkpoint + ".sums"); err != nil {
			return rep, err
		}
	}
	return rep, nil
}
