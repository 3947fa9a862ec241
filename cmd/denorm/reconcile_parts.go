package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// completionIndexEnv is the variable a Kubernetes Indexed Job sets to the
// index of each pod.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// planInDir is the copy of the plan a run leaves in its results directory,
// so that merge DIR needs nothing else.
const planInDir = "plan.json"

func newReconcilePlanCmd() *cobra.Command {
	var (
		schemaPath, out, table, since string
		parts, sample, rangeRows      int
		rate                          float64
	)
	cmd := &cobra.Command{
		Use:   "plan --schema S [--store URL] --parts N --out plan.json",
		Short: "Freeze the key ranges of a reconcile run split into N parts",
		Long: `Sample the primary tables (one scan, keeping a fixed number of rows) and cut
each primary table into N parts and each derived table into ranges of about
--range-rows rows, range j belonging to part j mod N. The plan is computed
once, so that every part cuts the same ranges even if regions split while the
parts run. Choose far more parts than workers: a part is the unit of retry.

The plan records the schema path, a digest of the schema and the store URL;
run and merge refuse a schema that changed since.`,
		Example: `  denorm reconcile plan --schema examples/orders.yaml --parts 64 --out plan.json
  denorm reconcile plan --schema orders.yaml --store hbase://thrift:9090 --parts 256 --since 7d --out /plans/plan.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if schemaPath == "" || out == "" {
				return usageErrorf("--schema and --out are required")
			}
			if parts < 1 {
				return usageErrorf("--parts %d: want at least 1", parts)
			}
			if rate < 0 || sample < 0 || rangeRows < 0 {
				return usageErrorf("--rate, --sample and --range-rows must not be negative")
			}
			po := reconcile.PlanOptions{Parts: parts, Table: table, Sample: sample, RangeRows: rangeRows, Rate: rate}
			if since != "" {
				if po.Since, err = parseSince(since, time.Now()); err != nil {
					return usageError(err)
				}
			}
			sp, digest, err := loadSchemaDigest(schemaPath)
			if err != nil {
				return err
			}
			if err := checkPrimaryTable(sp, table); err != nil {
				return err
			}
			st, err := openScanStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			p, err := reconcile.NewPlan(cmd.Context(), sp, st, po)
			if err != nil {
				return err
			}
			p.Schema, p.SchemaSHA256, p.Store = schemaPath, digest, cmd.Flag("store").Value.String()
			if err := reconcile.WritePlan(out, p); err != nil {
				return fmt.Errorf("write plan: %w", err)
			}
			ranges := 0
			for _, t := range p.Tables {
				for _, d := range t.Derived {
					ranges += len(d.Splits) + 1
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plan %s: %d parts, %d derived ranges, written to %s\n", p.ID(), p.Parts, ranges, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().StringVar(&out, "out", "", "plan file to write (required)")
	cmd.Flags().IntVar(&parts, "parts", 1, "number of parts (completions of the Indexed Job)")
	cmd.Flags().StringVar(&table, "table", "", "primary table to plan (default every primary table)")
	cmd.Flags().StringVar(&since, "since", "", "check only counter rows at or after this time: 7d, 36h, 2026-11-01 or RFC 3339")
	cmd.Flags().IntVar(&sample, "sample", 0, "primary rows sampled to place range boundaries (default 4096)")
	cmd.Flags().IntVar(&rangeRows, "range-rows", 0, "derived rows per range, about (default 20000); bounds a range's diff")
	cmd.Flags().Float64Var(&rate, "rate", 0, "cap the rows read per second by the sampling scan (0: no cap)")
	return cmd
}

func newReconcileRunCmd() *cobra.Command {
	var (
		planPath, out, partFlag, schemaPath, format string
		dryRun, purge, stopped                      bool
		rate                                        float64
		workers                                     int
	)
	cmd := &cobra.Command{
		Use:   "run --plan plan.json [--part I] --out DIR",
		Short: "Run one part of a reconcile plan and write its partial result",
		Long: `Derive the copies of the primary rows in part I's primary range, adding
their hashes to the expected checksums of every derived range; check (and,
unless --dry-run, repair) their live copies; scan the part's own derived
ranges into their stored checksums; write DIR/part-NNNNN.json. A rerun of a
part replaces its result. merge DIR then compares the checksums and diffs
the unequal ranges.

I defaults to the JOB_COMPLETION_INDEX environment variable, which a
Kubernetes Indexed Job sets in each pod. Logs (JSON, stderr) report the
part's progress; --rate caps the rows this worker reads per second.

Exit codes: 0 the part ran (its findings are in the result; merge decides);
1 a live-copy repair failed; 2 bad usage, a bad plan, or a schema that
changed since the plan.`,
		Example: `  denorm reconcile run --plan plan.json --part 3 --out results/
  JOB_COMPLETION_INDEX=3 denorm reconcile run --plan plan.json --out results/ --dry-run --rate 20000`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if planPath == "" || out == "" {
				return usageErrorf("--plan and --out are required")
			}
			if rate < 0 || workers < 0 {
				return usageErrorf("--rate and --workers must not be negative")
			}
			if partFlag == "" {
				partFlag = os.Getenv(completionIndexEnv)
				if partFlag == "" {
					return usageErrorf("--part is required (or set %s)", completionIndexEnv)
				}
			}
			part, perr := strconv.Atoi(partFlag)
			if perr != nil || part < 0 {
				return usageErrorf("part %q: want an index from 0", partFlag)
			}
			p, sp, err := openPlan(planPath, schemaPath)
			if err != nil {
				return err
			}
			if part >= p.Parts {
				return usageErrorf("part %d: the plan has parts 0 to %d", part, p.Parts-1)
			}
			if purge && !embeddedURL(storeURL(cmd, p)) {
				return usageErrorf("--purge-markers needs the embedded store (pebble://)")
			}
			st, err := openPlanStore(cmd, p)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			lg := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil)).With("part", part, "plan", p.ID())
			lg.Info("reconcile part started", "parts", p.Parts, "dry_run", dryRun)
			prog := newRowProgress(cmd.ErrOrStderr())
			logp := newProgressLog(lg, 5*time.Second)
			opts := reconcile.Options{DryRun: dryRun, Rate: rate, Workers: workers, PurgeMarkers: purge, WritersStopped: stopped,
				Progress: func(pr reconcile.Progress) { prog.progress(pr); logp.progress(pr) }}
			start := time.Now()
			res, err := reconcile.RunPart(cmd.Context(), sp, st, p, part, opts)
			prog.done()
			if err != nil {
				lg.Error("reconcile part failed", "err", err)
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("results: %w", err)
			}
			if err := reconcile.WritePlan(filepath.Join(out, planInDir), p); err != nil {
				return fmt.Errorf("results: %w", err)
			}
			if err := reconcile.WritePartial(out, res); err != nil {
				return err
			}
			lg.Info("reconcile part done", "rows", res.Report.Rows, "rows_read", res.Report.RowsRead,
				"live_differences", res.Report.Differences(), "failed", res.Report.Failed(), "seconds", time.Since(start).Seconds())
			if format == "json" {
				err = writeJSON(cmd.OutOrStdout(), res.Report)
			} else {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "part %d of %d: %d primary rows, result in %s\n", part, p.Parts, res.Report.Rows, reconcile.PartialFile(out, part))
			}
			if err != nil {
				return err
			}
			if res.Report.Failed() > 0 {
				return problemsFound()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&planPath, "plan", "", "plan file from reconcile plan (required)")
	cmd.Flags().StringVar(&out, "out", "", "results directory (required; shared by every part)")
	cmd.Flags().StringVar(&partFlag, "part", "", "part index (default $"+completionIndexEnv+")")
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (default the plan's)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report differences without repairing them")
	cmd.Flags().Float64Var(&rate, "rate", 0, "cap the rows this worker reads per second (0: no cap)")
	cmd.Flags().IntVar(&workers, "workers", 0, "goroutines deriving entities (default 4)")
	cmd.Flags().BoolVar(&purge, "purge-markers", false, "embedded store: when a repair is masked by a delete marker, major-compact the table and repair again")
	cmd.Flags().BoolVar(&stopped, "writers-stopped", false, "no writer runs during the job: repair bounded counter rows a lately moved entity counts in now rather than in a later run")
	addFormatFlag(cmd, &format)
	return cmd
}

func newReconcileMergeCmd() *cobra.Command {
	var (
		planPath, schemaPath, format, metricsPath string
		purge, stopped                            bool
		rate                                      float64
		diffCells                                 int
	)
	cmd := &cobra.Command{
		Use:   "merge DIR",
		Short: "Combine the partial results of every part into the report",
		Long: `Add up the checksums the parts wrote into DIR; a range whose expected and
stored checksums agree is valid whole. Diff the unequal ranges row by row
(reading only those ranges and the primary table) and, when the parts ran
without --dry-run, repair them; then print the report. A part missing, a
result of another plan or a range counted twice is an error.

Exit codes: 0 no differences, or all repaired; 1 a dry run found
differences, or a repair failed; 2 bad usage, a missing part, or a schema
that changed since the plan.`,
		Example: `  denorm reconcile merge results/
  denorm reconcile merge results/ --format json --metrics-file /var/lib/node_exporter/denorm.prom`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			dir := args[0]
			if planPath == "" {
				planPath = filepath.Join(dir, planInDir)
			}
			p, sp, err := openPlan(planPath, schemaPath)
			if err != nil {
				return err
			}
			parts, err := reconcile.ReadPartials(dir)
			if err != nil {
				return usageError(err)
			}
			dry := true
			for i, pr := range parts {
				if i > 0 && pr.Report.DryRun != dry {
					return usageErrorf("results in %s mix dry runs and repair runs: run every part the same way", dir)
				}
				dry = pr.Report.DryRun
			}
			st, err := openPlanStore(cmd, p)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			prog := newRowProgress(cmd.ErrOrStderr())
			if diffCells < 0 {
				return usageErrorf("--diff-cells %d: want 0 or more", diffCells)
			}
			opts := reconcile.Options{DryRun: dry, Rate: rate, PurgeMarkers: purge, DiffCells: diffCells, Progress: prog.progress, WritersStopped: stopped}
			if purge && !embeddedURL(storeURL(cmd, p)) {
				return usageErrorf("--purge-markers needs the embedded store (pebble://)")
			}
			rep, err := reconcile.Merge(cmd.Context(), sp, st, p, parts, opts)
			prog.done()
			if errors.Is(err, reconcile.ErrResults) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			return finishReport(cmd, rep, format, metricsPath, "", dry)
		},
	}
	cmd.Flags().StringVar(&planPath, "plan", "", "plan file (default DIR/plan.json, which run leaves there)")
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (default the plan's)")
	cmd.Flags().StringVar(&metricsPath, "metrics-file", "", "write the report in Prometheus text format (node exporter textfile collector)")
	cmd.Flags().Float64Var(&rate, "rate", 0, "cap the rows the diff reads per second (0: no cap)")
	cmd.Flags().IntVar(&diffCells, "diff-cells", 0, "cells of unequal ranges one diff pass keeps in memory (default 100000); each pass scans the primary table")
	cmd.Flags().BoolVar(&purge, "purge-markers", false, "embedded store: when a repair is masked by a delete marker, major-compact the table and repair again")
	cmd.Flags().BoolVar(&stopped, "writers-stopped", false, "no writer runs during the job: repair bounded counter rows a lately moved entity counts in now rather than in a later run")
	addFormatFlag(cmd, &format)
	return cmd
}

// loadSchemaDigest loads a schema and the SHA-256 of its file.
func loadSchemaDigest(path string) (*schema.Plan, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", usageError(err)
	}
	sp, err := loadSchema(path)
	if err != nil {
		return nil, "", err
	}
	s := sha256.Sum256(b)
	return sp, hex.EncodeToString(s[:]), nil
}

// openPlan reads a plan and its schema (schemaPath, or the plan's), and
// refuses a schema that changed since the plan was made.
func openPlan(planPath, schemaPath string) (*reconcile.Plan, *schema.Plan, error) {
	p, err := reconcile.ReadPlan(planPath)
	if err != nil {
		return nil, nil, usageError(err)
	}
	if schemaPath == "" {
		schemaPath = p.Schema
	}
	if schemaPath == "" {
		return nil, nil, usageErrorf("plan %s names no schema: give --schema", planPath)
	}
	sp, digest, err := loadSchemaDigest(schemaPath)
	if err != nil {
		return nil, nil, err
	}
	if p.SchemaSHA256 != "" && p.SchemaSHA256 != digest {
		return nil, nil, usageErrorf("schema %s changed since plan %s was made: make the plan again", schemaPath, planPath)
	}
	if err := p.Check(sp); err != nil {
		return nil, nil, usageErrorf("%s: %v", planPath, err)
	}
	return p, sp, nil
}

// storeURL is --store when given, else the plan's store.
func storeURL(cmd *cobra.Command, p *reconcile.Plan) string {
	if f := cmd.Flag("store"); f != nil && (f.Changed || p.Store == "") {
		return f.Value.String()
	}
	return p.Store
}

func embeddedURL(u string) bool { return len(u) >= 7 && u[:7] == "pebble:" }

func openPlanStore(cmd *cobra.Command, p *reconcile.Plan) (store.Store, error) {
	if err := cmd.Flags().Set("store", storeURL(cmd, p)); err != nil {
		return nil, usageError(err)
	}
	return openScanStore(cmd)
}

func checkPrimaryTable(sp *schema.Plan, table string) error {
	if table == "" {
		return nil
	}
	if t := sp.Table(table); t == nil || t.Entity == "" || sp.Primary(t.Entity) != t {
		return usageErrorf("--table %s is not a primary table of the schema", table)
	}
	return nil
}

// progressLog logs a part's progress as JSON lines, at most once a period
// per phase change or period.
type progressLog struct {
	mu     sync.Mutex
	lg     *slog.Logger
	period time.Duration
	last   time.Time
	phase  string
}

func newProgressLog(lg *slog.Logger, period time.Duration) *progressLog {
	return &progressLog{lg: lg, period: period}
}

func (l *progressLog) progress(pr reconcile.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pr.Phase == l.phase && time.Since(l.last) < l.period {
		return
	}
	l.last, l.phase = time.Now(), pr.Phase
	l.lg.Info("reconcile progress", "phase", pr.Phase, "table", pr.Table, "rows", pr.Rows)
}
