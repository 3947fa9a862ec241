package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/review"
	"github.com/denorm/denorm/review/live"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

func newReviewCmd() *cobra.Command {
	var (
		format string
		sample int
		draft  string
	)
	cmd := &cobra.Command{
		Use:   "review SCHEMA|TABLE-URL [--format text|json|sarif] [--sample N] [--draft FILE]",
		Short: "Review a schema against the anti-pattern catalogue",
		Long: `Apply the anti-pattern catalogue to a schema file: row keys that make hot
spots or do not serve the queries, data shapes that outgrow rows and cells,
client settings that hurt under load, and operational settings that lose data
or time. docs/rules.md describes every rule, with an example.

Each finding names its rule, severity (error, warning or info), the table or
query and the line of the schema it comes from, and the fix.

Formats: text (for people), json (stable:
{"findings":[{"rule","severity","table","query","line","message","fix"}],
"summary":{"error","warning","info"}}) and sarif (SARIF 2.1.0, for code
scanning tools).

A table that already exists can be reviewed without a schema: give its URL,
hbase://HOST:9090/TABLE or pebble:///DIR/TABLE (the last path element is the
table). The review describes the table (families, settings, regions), samples
up to --sample row keys (the first keys of each region, then a scan from the
start; rows are read in pieces, so wide rows do not fill memory) and reports
what the bytes show under the same rule ids: a time or sequence leading the
key, few distinct leading values, families that share settings, long names,
huge cells or rows, TTL over non-clock timestamps, regions the sample leaves
empty. --draft FILE writes a starting schema from what was seen.

Exit codes: 0 no error findings (warnings and info allowed); 1 at least one
error finding; 2 the schema could not be read or loaded, the table does not
exist, or bad usage.`,
		Example: `  denorm review examples/orders.yaml
  denorm review examples/device_events_naive.yaml --format json
  denorm review schema.yaml --format sarif > denorm.sarif
  denorm review hbase://127.0.0.1:9090/events --sample 5000
  denorm review pebble://./denorm-data/orders --draft orders.draft.yaml`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(review.Formats(), format) {
				return usageErrorf("--format %q: want %s", format, strings.Join(review.Formats(), ", "))
			}
			if sample < 1 {
				return usageErrorf("--sample %d: want 1 or more", sample)
			}
			var rep review.Report
			if strings.Contains(args[0], "://") {
				var err error
				if rep, err = reviewLive(cmd, args[0], format, sample, draft); err != nil {
					return err
				}
			} else {
				if draft != "" {
					return usageErrorf("--draft needs a table URL, not a schema file")
				}
				plan, err := loadSchema(args[0])
				if err != nil {
					return err
				}
				rep = review.Review(plan)
			}
			rep.ToolVersion, _, _ = buildVersion()
			if err := review.Write(cmd.OutOrStdout(), rep, format); err != nil {
				return err
			}
			if rep.HasErrors() {
				return problemsFound()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json or sarif")
	cmd.Flags().IntVar(&sample, "sample", live.DefaultSample, "row keys to sample from a live table")
	cmd.Flags().StringVar(&draft, "draft", "", "write a starting schema for the live table to this file")
	return cmd
}

// reviewLive inspects an existing table and reviews what it saw.
func reviewLive(cmd *cobra.Command, raw, format string, sample int, draft string) (review.Report, error) {
	storeURL, table, err := live.SplitURL(raw)
	if err != nil {
		return review.Report{}, usageError(err)
	}
	u, _ := url.Parse(storeURL)
	if !slices.Contains(store.Schemes(), u.Scheme) {
		return review.Report{}, usageErrorf("table URL %q: scheme %q is not one of %s", raw, u.Scheme, strings.Join(store.Schemes(), ", "))
	}
	st, err := store.Open(cmd.Context(), storeURL)
	if err != nil {
		return review.Report{}, fmt.Errorf("open %s: %w", storeURL, err)
	}
	defer st.Close()
	obs, err := live.Inspect(cmd.Context(), st, table, live.Options{Sample: sample})
	if err != nil {
		return review.Report{}, err
	}
	obs.Source = raw
	if format == "" || format == "text" {
		// For people, what was seen comes before what it means.
		if err := live.WriteDescription(cmd.OutOrStdout(), obs); err != nil {
			return review.Report{}, err
		}
	}
	if draft != "" {
		if err := writeDraft(draft, obs); err != nil {
			return review.Report{}, err
		}
	}
	return live.Review(obs), nil
}

func writeDraft(path string, obs *live.Observation) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return usageErrorf("--draft: %v", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write draft %s: %w", path, cerr)
		}
	}()
	return live.WriteDraft(f, obs)
}

// loadSchema loads a schema file; a missing file or a schema with problems
// is an input error (exit 2).
func loadSchema(path string) (*schema.Plan, error) {
	plan, err := schema.Load(path)
	if err == nil {
		return plan, nil
	}
	var serrs schema.Errors
	if errors.As(err, &serrs) || errors.Is(err, fs.ErrNotExist) {
		return nil, usageError(err)
	}
	return nil, usageError(fmt.Errorf("load schema %s: %w", path, err))
}
