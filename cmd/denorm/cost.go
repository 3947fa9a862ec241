package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/cost"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// costDoc is the JSON of denorm cost: the estimate, plus the measurement
// when --measure asked for one.
type costDoc struct {
	cost.Estimate
	Measurement *cost.Measurement `json:"measurement,omitempty"`
}

func newCostCmd() *cobra.Command {
	var (
		format      string
		replication int
		measure     int
	)
	cmd := &cobra.Command{
		Use:   "cost SCHEMA [--format text|json] [--replication N] [--measure N]",
		Short: "Bytes per logical record, per table and in all",
		Long: `Estimate what one logical record (one entity) costs on disk in every table of
the schema, from HBase's KeyValue layout: each cell stores 20 fixed bytes plus
its row key, family, qualifier and value. Sizes come from the schema: declared
field sizes (size:), fixed widths of numbers, and a default of 16 bytes for
strings that declare none; child lists count their typical: size, else max.

Figures are before block encoding and compression, for one copy and for
--replication copies (HDFS keeps 3 by default). Counter tables are shown per
counter, not per record.

With --measure N, denorm also writes N synthetic records of every entity into
a temporary embedded store and reports the bytes per record it actually wrote
and, if the store can tell, what they take on disk after its compression.

Exit codes: 0 success; 1 the measurement failed; 2 the schema could not be
read or loaded, or bad usage.`,
		Example: `  denorm cost examples/orders.yaml
  denorm cost examples/orders.yaml --replication 1 --format json
  denorm cost examples/device_events.yaml --measure 10000`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if replication < 1 {
				return usageErrorf("--replication %d: want 1 or more", replication)
			}
			if measure < 0 {
				return usageErrorf("--measure %d: want a record count", measure)
			}
			plan, err := loadSchema(args[0])
			if err != nil {
				return err
			}
			est, err := cost.EstimatePlan(plan, cost.Options{Replication: replication})
			if err != nil {
				return usageError(err)
			}
			doc := costDoc{Estimate: est}
			if measure > 0 {
				m, err := measureScratch(cmd, plan, measure)
				if err != nil {
					return err
				}
				doc.Measurement = &m
			}
			out := cmd.OutOrStdout()
			if format == formatJSON {
				return writeJSON(out, doc)
			}
			if err := cost.WriteText(out, est); err != nil {
				return err
			}
			if doc.Measurement != nil {
				return cost.WriteMeasurementText(out, *doc.Measurement)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", formatText, "output format: text (for people) or json (stable, for programs)")
	cmd.Flags().IntVar(&replication, "replication", cost.DefaultReplication, "HDFS replication factor for the replicated figures")
	cmd.Flags().IntVar(&measure, "measure", 0, "also write this many synthetic records into a temporary embedded store and measure them")
	return cmd
}

// measureScratch measures in a temporary embedded store, removed after, so
// that --measure never writes into the user's data.
func measureScratch(cmd *cobra.Command, plan *schema.Plan, n int) (m cost.Measurement, err error) {
	dir, err := os.MkdirTemp("", "denorm-cost-")
	if err != nil {
		return m, fmt.Errorf("measure: temporary store: %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := pebble.Open(cmd.Context(), dir, pebble.Options{})
	if err != nil {
		return m, fmt.Errorf("measure: open temporary store: %w", err)
	}
	defer closeStore(st, &err)
	primaries := map[string]bool{}
	for _, e := range plan.Entities {
		if t := plan.Primary(e.Name); t != nil {
			primaries[t.Name] = true
		}
	}
	prog := newBar(cmd.ErrOrStderr(), int64(n*max(len(primaries), 1)), "measuring", "records", false)
	defer prog.done()
	return cost.Measure(cmd.Context(), &countingStore{Store: st, disk: st, primaries: primaries, bar: prog}, plan, n)
}

// countingStore moves a bar on by the primary rows written through it: one
// a synthetic record. DiskUsage is passed on, so the measurement still
// reads the store's disk use.
type countingStore struct {
	store.Store
	disk      cost.DiskUser
	primaries map[string]bool
	bar       *bar
}

func (c *countingStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	errs, err := c.Store.Batch(ctx, table, ms)
	if c.primaries[table] {
		c.bar.add(int64(len(ms)))
	}
	return errs, err
}

func (c *countingStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	err := c.Store.Mutate(ctx, table, m)
	if c.primaries[table] {
		c.bar.add(1)
	}
	return err
}

func (c *countingStore) DiskUsage(ctx context.Context, table string) (int64, error) {
	return c.disk.DiskUsage(ctx, table)
}

// GetMany passes on to the store's multi-get (the writer reads a batch's
// rows with it), which embedding alone would hide.
func (c *countingStore) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	return store.GetMany(ctx, c.Store, table, gets)
}
