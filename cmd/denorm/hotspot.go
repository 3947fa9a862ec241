package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/hotspot"
	"github.com/denorm/denorm/schema"
)

func newHotspotCmd() *cobra.Command {
	var (
		format, table, out string
		regions            int
		duration, step     time.Duration
		seed               uint64
		samples            int
	)
	cmd := &cobra.Command{
		Use:   "hotspot SCHEMA [--table T] [--regions N] [--duration D] [--step D] [--seed S] [--out heat.png|heat.html] [--format text|json]",
		Short: "Simulated (or observed) load per region over time, and a heat map",
		Long: `Simulate a table's writes, and the reads of its queries, over its regions for
the schema's row key design and workload, and report how evenly the load
spreads: the busiest region's share, its load over the mean region's, and how
many regions take half of it.

Each time step samples a few thousand synthetic entities whose field values
follow the workload's declared distributions (timestamps follow simulated
time), encodes their real row keys and routes them to regions. Regions start
as the schema's pre-split (the split keys denorm ddl writes) or as one
region, and split at their middle key past region_max_filesize (10 GiB by
default; scaled down when a one-region table would not otherwise split
within the run).

--out writes a heat map: time across, regions by start key down, load as
colour; a .png file, or a .html file with inline SVG.

With --store given explicitly, the command instead reads the per-region
request counts of the table on that store (cumulative since each region
opened) and reports and draws those.

JSON output (--format json) is stable: fields are only ever added. Top
level: schema, table, rowkey, source (simulation or store), unit, layout,
start, duration_ns, step_ns, seed, writes_per_second, reads_per_second,
samples_per_step, bytes_per_row, split_size, split_scale, notes. regions[]:
id, parent, start_key and end_key (HBase shell escapes), start and end
(base64), label (when the start key is a whole key), born_step, split_step
(-1 while alive) and, per step from born_step, writes[], reads[], bytes[].
steps[]: at_ns, regions, writes, reads, busiest_region, busiest_share,
max_over_mean, half_load_regions (all requests), write_figures (writes
alone). summary: start_regions, end_regions, splits, requests and writes
(each typical and worst), noise_max_over_mean, distinct_busiest.

Exit codes: 0 success; 1 the simulation or the store failed; 2 the schema
could not be read or loaded, or bad usage.`,
		Example: `  denorm hotspot examples/device_events_naive.yaml --out heat.png
  denorm hotspot examples/device_events.yaml --duration 6h --step 5m --format json
  denorm hotspot examples/orders.yaml --table orders_by_status --regions 8
  denorm hotspot examples/device_events.yaml --store hbase://127.0.0.1:9090 --out observed.html`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			ext := strings.ToLower(filepath.Ext(out))
			if out != "" && ext != ".png" && ext != ".html" && ext != ".htm" {
				return usageErrorf("--out %q: want a .png or .html file", out)
			}
			plan, err := loadSchema(args[0])
			if err != nil {
				return err
			}
			var res *hotspot.Result
			if f := cmd.Flag("store"); f != nil && f.Changed {
				res, err = observeStore(cmd, plan, table)
			} else {
				// The simulation reports no progress of its own: a spinner
				// with the time taken says it is working.
				stop := spinner(cmd.ErrOrStderr(), fmt.Sprintf("simulating %s in steps of %s", roundDuration(duration), roundDuration(step)))
				res, err = hotspot.Simulate(cmd.Context(), plan, hotspot.Options{
					Table: table, Regions: regions, Duration: duration, Step: step,
					Seed: seed, SamplesPerStep: samples,
				})
				stop()
				// Everything but an interruption comes from the schema
				// or the flags: an input error.
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
					err = usageError(err)
				}
			}
			if err != nil {
				return err
			}
			if out != "" {
				if err := writeHeatmap(out, ext, res); err != nil {
					return err
				}
			}
			w := cmd.OutOrStdout()
			if format == formatJSON {
				return hotspot.WriteJSON(w, res)
			}
			if err := hotspot.WriteText(w, res); err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintf(w, "heat map written to %s\n", out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", formatText, "output format: text (for people) or json (stable, for programs)")
	cmd.Flags().StringVar(&table, "table", "", "table to simulate (default: the first primary table)")
	cmd.Flags().IntVar(&regions, "regions", 0, "regions at creation, instead of the schema's presplit")
	cmd.Flags().DurationVar(&duration, "duration", hotspot.DefaultDuration, "simulated time")
	cmd.Flags().DurationVar(&step, "step", hotspot.DefaultStep, "length of one time step")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed; the same seed gives the same result")
	cmd.Flags().IntVar(&samples, "samples", hotspot.DefaultSamplesPerStep, "writes sampled per step (more: less noise, slower)")
	cmd.Flags().StringVar(&out, "out", "", "write a heat map to this .png or .html file")
	return cmd
}

// observeStore reads the table's regions from the store --store names.
func observeStore(cmd *cobra.Command, plan *schema.Plan, table string) (res *hotspot.Result, err error) {
	t := plan.Table(table)
	if table == "" {
		for _, c := range plan.Tables {
			if c.Role == schema.RolePrimary {
				t = c
				break
			}
		}
	}
	if t == nil {
		return nil, usageErrorf("schema %s has no table %q", plan.Name, table)
	}
	st, err := openStore(cmd)
	if err != nil {
		return nil, err
	}
	defer closeStore(st, &err)
	regions, err := st.Regions(cmd.Context(), t.Name)
	if err != nil {
		return nil, fmt.Errorf("regions of %s: %w", t.Name, err)
	}
	return hotspot.FromStore(plan.Name, t.Name, t.Key.Exprs(), regions), nil
}

func writeHeatmap(path, ext string, res *hotspot.Result) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return usageErrorf("--out: %v", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", path, cerr)
		}
	}()
	var write func(io.Writer, *hotspot.Result) error = hotspot.WritePNG
	if ext != ".png" {
		write = hotspot.WriteHTML
	}
	return write(f, res)
}

// roundDuration prints 6h0m0s as 6h and 90s as 1m30s.
func roundDuration(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"0s", "0m"} {
		if len(s) > 2 && strings.HasSuffix(s, z) && (strings.HasSuffix(s, "m0s") || strings.HasSuffix(s, "h0m")) {
			s = strings.TrimSuffix(s, z)
		}
	}
	return s
}
