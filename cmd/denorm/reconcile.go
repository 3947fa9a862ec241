package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/store"
)

func newReconcileCmd() *cobra.Command {
	var (
		schemaPath, table, shard, format, metricsPath, checkpoint, since string
		dryRun, purge, stopped                                           bool
		rate                                                             float64
		diffCells                                                        int
	)
	cmd := &cobra.Command{
		Use:   "reconcile --schema S [--store URL] [--table T] [--dry-run] [--shard i/n] [--since D]",
		Short: "Verify every derived copy against the primary table and repair what differs",
		Long: `Recompute every index row, covering value, lookup row, counter and live copy
the schema derives from the primary rows, compare with the store, and repair:
missing copies are written, stale ones rewritten, orphaned index and lookup
rows deleted (after the primary row is read again), counters set to the
recomputed value. An entity with a locator table has every primary row
holding its state checked against its locator row, and listed there if it
is not (kind "locator"). Repairs carry timestamps that a newer write always
beats, so the job can run while the writer does.

How: every derived table's key space is cut into ranges (sampled from the
primary table). The primary pass derives each entity's copies and adds a
hash of every expected cell to the checksum of its range; a scan of each
range builds the same checksum from the store. Equal ranges are done; only
unequal ranges are diffed row by row. Memory does not grow with the table.

--shard i/n makes this one of n processes: each reads every primary row
and compares the ranges dealt to it, so each result is final alone and
together they check every copy, counters included, once. For many workers
(a Kubernetes Indexed Job) use the subcommands plan, run and merge instead.
--checkpoint keeps the last primary key done (and the checksums so far) in
a file, so an interrupted run resumes there.

Every repair is read back. One the store does not make visible (a delete
marker at or above its timestamp masks it) is counted failed with its
cause and the run exits 1; --purge-markers (embedded store only) then
major-compacts the table, which purges every delete marker, and repairs
again. --rate caps the rows read per second.

The job runs beside the writers. A bounded counter row that an entity moved
in the last minute counts in is left to a later run (a scan under way may
meet the entity twice or not at all); --writers-stopped, for a run while no
writer runs, repairs it at once.

--since limits the counter check to counter rows whose key's time part
(a day(...) part or a timestamp field) is at or after the given time: an age
(36h, 7d, 2w), a day (2026-11-01) or an RFC 3339 time. Older counter rows are
left alone (a counter table with a TTL has dropped them on purpose); counter
tables whose key has no time part, and every other copy, are checked whole.

Exit codes: 0 no differences, or all repaired; 1 a dry run found
differences, or a repair failed; 2 bad usage or an unreadable schema.`,
		Example: `  denorm reconcile --schema examples/orders.yaml --dry-run
  denorm reconcile --schema examples/orders.yaml --table orders --format json
  denorm reconcile --schema examples/orders.yaml --shard 0/4 --checkpoint shard0.ckpt
  denorm reconcile --schema examples/orders.yaml --since 7d --dry-run
  denorm reconcile --schema examples/orders.yaml --rate 5000 --format json
  denorm reconcile --schema examples/orders.yaml --purge-markers
  denorm reconcile --schema examples/orders.yaml --writers-stopped
  denorm reconcile --schema examples/orders.yaml --metrics-file /var/lib/node_exporter/denorm.prom
  denorm reconcile plan --schema examples/orders.yaml --parts 64 --out plan.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			if schemaPath == "" {
				return usageErrorf("--schema is required")
			}
			if rate < 0 {
				return usageErrorf("--rate %v: want rows per second, 0 for no cap", rate)
			}
			if diffCells < 0 {
				return usageErrorf("--diff-cells %d: want 0 or more", diffCells)
			}
			opts := reconcile.Options{Table: table, DryRun: dryRun, Checkpoint: checkpoint, Rate: rate, PurgeMarkers: purge, DiffCells: diffCells, WritersStopped: stopped}
			if shard != "" {
				if opts.Shard, err = reconcile.ParseShard(shard); err != nil {
					return usageError(err)
				}
			}
			if since != "" {
				if opts.Since, err = parseSince(since, time.Now()); err != nil {
					return usageError(err)
				}
			}
			plan, err := loadSchema(schemaPath)
			if err != nil {
				return err
			}
			if table != "" {
				if t := plan.Table(table); t == nil || t.Entity == "" || plan.Primary(t.Entity) != t {
					return usageErrorf("--table %s is not a primary table of the schema", table)
				}
			}
			if purge && !embeddedStore(cmd) {
				return usageErrorf("--purge-markers needs the embedded store (pebble://): on HBase, run a major compaction yourself, then reconcile")
			}
			st, err := openScanStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			prog := newRowProgress(cmd.ErrOrStderr())
			opts.Progress = prog.progress
			rep, runErr := reconcile.Run(cmd.Context(), plan, st, opts)
			prog.done()
			if errors.Is(runErr, reconcile.ErrBadCheckpoint) {
				return usageError(runErr)
			}
			if runErr != nil {
				return runErr
			}
			return finishReport(cmd, rep, format, metricsPath, table, dryRun)
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().StringVar(&table, "table", "", "primary table to reconcile (default every primary table)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report differences without repairing them")
	cmd.Flags().StringVar(&shard, "shard", "", "i/n: compare only the derived ranges dealt to shard i of n (each shard reads every primary row)")
	cmd.Flags().StringVar(&since, "since", "", "check only counter rows at or after this time: 7d, 36h, 2026-11-01 or RFC 3339")
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "file keeping the last primary key done, to resume an interrupted run")
	cmd.Flags().StringVar(&metricsPath, "metrics-file", "", "write the report in Prometheus text format (node exporter textfile collector)")
	cmd.Flags().Float64Var(&rate, "rate", 0, "cap the rows read per second (0: no cap)")
	cmd.Flags().IntVar(&diffCells, "diff-cells", 0, "cells of unequal ranges one diff pass keeps in memory (default 100000); each pass scans the primary table")
	cmd.Flags().BoolVar(&purge, "purge-markers", false, "embedded store: when a repair is masked by a delete marker, major-compact the table and repair again")
	cmd.Flags().BoolVar(&stopped, "writers-stopped", false, "no writer runs during the job: repair bounded counter rows a lately moved entity counts in now rather than in a later run")
	addFormatFlag(cmd, &format)
	cmd.AddCommand(newReconcilePlanCmd(), newReconcileRunCmd(), newReconcileMergeCmd())
	return cmd
}

// embeddedStore reports whether --store names the embedded store.
func embeddedStore(cmd *cobra.Command) bool {
	raw := store.DefaultURL
	if f := cmd.Flag("store"); f != nil && f.Value.String() != "" {
		raw = f.Value.String()
	}
	return strings.HasPrefix(raw, "pebble:")
}

// writeMetricsFile replaces the file in one rename, so the node exporter
// never reads half a file.
func writeMetricsFile(path, table string, rep *reconcile.Report) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	if table == "" {
		table = "all"
	}
	werr := rep.WriteMetrics(f, table)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("metrics file: %w", werr)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("metrics file: %w", err)
	}
	return nil
}

// rowProgress shows the rows a reconcile has done, on a terminal only, as a
// progress bar. A run reports each phase's and table's rows from several
// goroutines, counting from 0 in each: the bar adds up the growth.
type rowProgress struct {
	bar  *bar
	mu   sync.Mutex
	last map[string]int64
}

func newRowProgress(w io.Writer) *rowProgress {
	return &rowProgress{bar: newBar(w, -1, "reconciling", "rows", false), last: map[string]int64{}}
}

func (p *rowProgress) progress(pr reconcile.Progress) {
	p.mu.Lock()
	k := pr.Phase + "\x00" + pr.Table
	d := pr.Rows - p.last[k]
	p.last[k] = pr.Rows
	p.mu.Unlock()
	if d > 0 {
		p.bar.add(d)
	}
}

func (p *rowProgress) done() { p.bar.done() }

// finishReport prints a reconcile report, writes its metrics file when one
// is asked for, and gives the exit: problems found when a repair failed or
// a dry run saw differences.
func finishReport(cmd *cobra.Command, rep *reconcile.Report, format, metricsPath, table string, dryRun bool) error {
	var err error
	if format == "json" {
		err = writeJSON(cmd.OutOrStdout(), rep)
	} else {
		err = rep.WriteText(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	if metricsPath != "" {
		if err := writeMetricsFile(metricsPath, table, rep); err != nil {
			return err
		}
	}
	if rep.Failed() > 0 || (dryRun && rep.Differences() > 0) {
		return problemsFound()
	}
	return nil
}
