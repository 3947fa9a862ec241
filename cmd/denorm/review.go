package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/review"
	"github.com/denorm/denorm/schema"
)

func newReviewCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "review SCHEMA [--format text|json|sarif]",
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

Exit codes: 0 no error findings (warnings and info allowed); 1 at least one
error finding; 2 the schema could not be read or loaded, or bad usage.`,
		Example: `  denorm review examples/orders.yaml
  denorm review examples/device_events_naive.yaml --format json
  denorm review schema.yaml --format sarif > denorm.sarif`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(review.Formats(), format) {
				return usageErrorf("--format %q: want %s", format, strings.Join(review.Formats(), ", "))
			}
			plan, err := loadSchema(args[0])
			if err != nil {
				return err
			}
			rep := review.Review(plan)
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
	return cmd
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
