package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/reconcile"
)

func newReconcileCmd() *cobra.Command {
	var (
		schemaPath, table, shard, format, metricsPath, checkpoint, since string
		dryRun                                                           bool
	)
	cmd := &cobra.Command{
		Use:   "reconcile --schema S [--store URL] [--table T] [--dry-run] [--shard i/n] [--since D]",
		Short: "Verify every derived copy against the primary table and repair what differs",
		Long: `Recompute every index row, covering value, lookup row, counter and live copy
the schema derives from the primary rows, compare with the store, and repair:
missing copies are written, stale ones rewritten, orphaned index and lookup
rows deleted (after the primary row is read again), counters set to the
recomputed value. Repairs carry timestamps that a newer write always beats,
so the job can run while the writer does.

--shard i/n deals the primary table's regions round robin to n processes;
together they cover every row once. Counter totals and counter orphans are
checked only by a run over the whole table (no --shard). --checkpoint keeps
the last primary key done in a file, so an interrupted run resumes there.

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
  denorm reconcile --schema examples/orders.yaml --metrics-file /var/lib/node_exporter/denorm.prom`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			if schemaPath == "" {
				return usageErrorf("--schema is required")
			}
			opts := reconcile.Options{Table: table, DryRun: dryRun, Checkpoint: checkpoint}
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
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			prog := newBar(cmd.ErrOrStderr(), -1, "reconciling", "primary rows", false)
			opts.Progress = prog.set
			rep, runErr := reconcile.Run(cmd.Context(), plan, st, opts)
			prog.done()
			if runErr != nil {
				return runErr
			}
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
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().StringVar(&table, "table", "", "primary table to reconcile (default every primary table)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report differences without repairing them")
	cmd.Flags().StringVar(&shard, "shard", "", "i/n: reconcile only shard i of n (regions dealt round robin)")
	cmd.Flags().StringVar(&since, "since", "", "check only counter rows at or after this time: 7d, 36h, 2026-11-01 or RFC 3339")
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "file keeping the last primary key done, to resume an interrupted run")
	cmd.Flags().StringVar(&metricsPath, "metrics-file", "", "write the report in Prometheus text format (node exporter textfile collector)")
	addFormatFlag(cmd, &format)
	return cmd
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
