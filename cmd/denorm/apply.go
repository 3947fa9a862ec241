package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/write"
)

func newApplyCmd() *cobra.Command {
	var (
		schemaPath, eventsPath, offsetPath, deadPath, format string
		fromStart                                            bool
		batch                                                int
	)
	cmd := &cobra.Command{
		Use:   "apply --schema S --events FILE [--store URL]",
		Short: "Apply a JSON-lines event file to every copy the schema declares",
		Long: `Apply change events (JSON lines, see docs/events.md) to the primary rows and
every index, counter and lookup row the schema derives from them. Missing
tables are created first, with the schema's families and split keys.

The run is idempotent and resumable: events carry versions that become cell
timestamps, the position reached is committed to an offset file (FILE.offset)
only after each batch is durably applied, and a restart resumes there.
Replays, duplicates and reordered events converge to the same state.

Events that cannot be applied (malformed JSON, a missing key or version, a
wrong type, a child list over its bound, a cell over the size limit, an
unknown entity) go to the dead letter file (FILE.dead.jsonl) with the line
and the reason, and the run goes on.

An event the store itself refuses (a row key or a cell over its limits) goes
to the dead letter too: its batch is split until the event stands alone, and
the rest is applied. A dead letter is written once: a run that resumes after
a kill, or replays with --from-start, does not write again the ones already
at the end of the dead letter file.

Exit codes: 0 all applied; 1 some events went to the dead letter, or the
store failed (run again to resume); 2 bad usage, an unreadable schema, or a
dead letter file that is the events file.`,
		Example: `  denorm gen orders --events 10000 --seed 1 > orders.jsonl
  denorm apply --schema examples/orders.yaml --events orders.jsonl
  denorm apply --schema examples/orders.yaml --events orders.jsonl --from-start --format json
  denorm apply --schema examples/orders.yaml --events orders.jsonl --store hbase://127.0.0.1:9090`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			if schemaPath == "" || eventsPath == "" {
				return usageErrorf("--schema and --events are required")
			}
			if err := checkBatch(batch); err != nil {
				return err
			}
			plan, err := loadSchema(schemaPath)
			if err != nil {
				return err
			}
			if err := write.Supports(plan); err != nil {
				return usageError(err)
			}
			if deadPath == "" {
				deadPath = eventsPath + ".dead.jsonl"
			}
			// Appending dead letters to the file being read would read them
			// back as events, for ever.
			if source.SameFile(deadPath, eventsPath) {
				return usageErrorf("--dead-letter %s is the events file itself: dead letters appended to it would be read back as events", deadPath)
			}
			src, err := source.OpenFile(eventsPath, source.FileOptions{OffsetPath: offsetPath, FromStart: fromStart})
			if err != nil {
				return usageError(err)
			}
			defer src.Close()
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			ctx := cmd.Context()
			if _, err := ddl.Create(ctx, st, plan); err != nil {
				return err
			}
			dl, err := source.OpenDeadLetterFile(deadPath)
			if err != nil {
				return err
			}
			defer func() {
				if cerr := dl.Close(); err == nil && cerr != nil {
					err = cerr
				}
			}()

			start := time.Now()
			prog := newBar(cmd.ErrOrStderr(), src.Size(), "applying "+filepath.Base(eventsPath), "", true)
			stats, runErr := write.Run(ctx, write.New(plan, st, write.Options{}), src, dl, write.RunOptions{
				BatchSize: batch,
				Progress:  func(write.Stats) { prog.set(src.Position().Offset) },
			})
			prog.done()
			sum := applySummary(stats, time.Since(start), deadPath)
			if format == "json" {
				if err := writeJSON(cmd.OutOrStdout(), sum); err != nil {
					return err
				}
			} else {
				sum.text(cmd.OutOrStdout())
			}
			if runErr != nil {
				return fmt.Errorf("%w (the committed offset is kept: run again to resume)", runErr)
			}
			if stats.DeadLetters > 0 {
				return problemsFound()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().StringVar(&eventsPath, "events", "", "JSON-lines event file (required)")
	cmd.Flags().StringVar(&offsetPath, "offset-file", "", "where the committed position is kept (default FILE.offset)")
	cmd.Flags().StringVar(&deadPath, "dead-letter", "", "dead letter file (default FILE.dead.jsonl)")
	cmd.Flags().BoolVar(&fromStart, "from-start", false, "ignore the committed position and replay the whole file")
	cmd.Flags().IntVar(&batch, "batch", 1000, "events per batch")
	addFormatFlag(cmd, &format)
	return cmd
}

// applyResult is the summary of `denorm apply`; its JSON form is stable.
type applyResult struct {
	Events  int `json:"events"`
	Applied int `json:"applied"`
	Stale   int `json:"stale"`
	// Expired: events past their primary table's TTL on arrival, skipped
	// (docs/writer.md, "Time to live").
	Expired     int `json:"expired"`
	Redone      int `json:"redone"`
	Refreshed   int `json:"refreshed"`
	DeadLetters int `json:"dead_letters"`
	// DeadLettersKnown: refused again, but already in the dead letter file
	// from an earlier run over the same lines (not written twice).
	DeadLettersKnown int            `json:"dead_letters_known"`
	DeadLetter       string         `json:"dead_letter_file,omitempty"`
	Cells            map[string]int `json:"cells"`
	DeleteMarkers    map[string]int `json:"delete_markers"`
	Increments       int            `json:"increments"`
	// CounterRows: bounded counter rows written (a put of the batch's
	// part cells in each; a row where no count changed is not written).
	CounterRows  int     `json:"counter_rows"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_second"`
}

func applySummary(s write.RunStats, d time.Duration, dead string) applyResult {
	r := applyResult{Events: s.Events, Applied: s.Applied, Stale: s.Stale, Expired: s.Expired, Redone: s.Redone, Refreshed: s.Refreshed, DeadLetters: s.DeadLetters, DeadLettersKnown: s.DeadLettersKnown,
		Cells: s.Cells, DeleteMarkers: s.Deletes, Increments: s.Increments, CounterRows: s.Counted, Seconds: d.Seconds()}
	if r.Cells == nil {
		r.Cells, r.DeleteMarkers = map[string]int{}, map[string]int{}
	}
	if s.DeadLetters > 0 {
		r.DeadLetter = dead
	}
	if d > 0 {
		r.EventsPerSec = float64(s.Events) / d.Seconds()
	}
	return r
}

func (r applyResult) text(w interface{ Write([]byte) (int, error) }) {
	fmt.Fprintf(w, "events %d: applied %d, stale or duplicate %d, redone %d, live copies refreshed %d, dead letters %d\n",
		r.Events, r.Applied, r.Stale, r.Redone, r.Refreshed, r.DeadLetters)
	if r.Expired > 0 {
		fmt.Fprintf(w, "  expired on arrival (past the primary table's TTL, skipped) %d\n", r.Expired)
	}
	tables := make([]string, 0, len(r.Cells))
	for t := range r.Cells {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(w, "  %-24s %9d cells  %9d delete markers\n", t, r.Cells[t], r.DeleteMarkers[t])
	}
	if r.Increments > 0 {
		fmt.Fprintf(w, "  counter increments %d\n", r.Increments)
	}
	if r.CounterRows > 0 {
		fmt.Fprintf(w, "  bounded counter rows written %d\n", r.CounterRows)
	}
	fmt.Fprintf(w, "%.1f s, %.0f events/s\n", r.Seconds, r.EventsPerSec)
	if r.DeadLetters > 0 {
		fmt.Fprintf(w, "dead letters written to %s\n", r.DeadLetter)
	}
	if r.DeadLettersKnown > 0 {
		fmt.Fprintf(w, "%d refused events were already in the dead letter file from an earlier run, not written again\n", r.DeadLettersKnown)
	}
}

// maxBatch bounds --batch: a batch's events are held in memory together
// (each up to 64 MiB), so the flag must not let one batch be the whole log.
const maxBatch = 100_000

func checkBatch(n int) error {
	if n < 1 || n > maxBatch {
		return usageErrorf("--batch %d: want 1 to %d events", n, maxBatch)
	}
	return nil
}
