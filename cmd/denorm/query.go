package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/read"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

func newQueryCmd() *cobra.Command {
	var (
		schemaPath, next, format string
		limit                    int
		repair, verbose          bool
	)
	cmd := &cobra.Command{
		Use:   "query --schema S [--store URL] QUERY field=value ...",
		Short: "Run one of the schema's queries: a get or a bounded scan",
		Long: `Run a query declared under queries: in the schema, with a value for each
field it is by. A full key is one Get; a key prefix is a scan bounded by
--limit (else the query's limit, else 100; at most 1000). A salted table is
read bucket by bucket and merged in key order. Thin index hits are checked
against the primary row: stale ones are dropped and counted, and with
--repair deleted at their own timestamp.

Values: timestamps as RFC 3339 or epoch milliseconds, numbers in decimal,
child fields by their path (items.sku=...). --next resumes after the page
that printed the token.

JSON output: {"rows":[{field: value}],"dropped_stale":n,"repaired":n,"next":token}.

Exit codes: 0 success; 1 the store failed; 2 bad usage (an unknown query, a
missing or wrong value, a bad token).`,
		Example: `  denorm query --schema examples/orders.yaml recent_orders customerId=c000001
  denorm query --schema examples/orders.yaml orders_by_status status=OPEN --limit 20 --format json
  denorm query --schema examples/orders.yaml daily_units items.sku=s00042 placedAt=2026-01-02T00:00:00Z`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			if schemaPath == "" {
				return usageErrorf("--schema is required")
			}
			plan, err := loadSchema(schemaPath)
			if err != nil {
				return err
			}
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			lvl := slog.LevelWarn
			if verbose {
				lvl = slog.LevelInfo
			}
			lg := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lvl}))
			r := read.New(plan, st, read.Options{Logger: lg})
			req, err := queryRequest(r, args[0], args[1:])
			if err != nil {
				return usageError(err)
			}
			req.Limit, req.Next, req.Repair = limit, next, repair
			res, err := r.Run(cmd.Context(), req)
			if errors.Is(err, read.ErrBadRequest) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			if format == formatJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			return writeQueryText(cmd.OutOrStdout(), plan, args[0], res)
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().IntVar(&limit, "limit", 0, "rows per page (default: the query's limit, else 100; at most 1000)")
	cmd.Flags().StringVar(&next, "next", "", "resume token printed by the previous page")
	cmd.Flags().BoolVar(&repair, "repair", false, "delete the stale thin-index entries the read finds")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log every stale hit dropped or repaired")
	addFormatFlag(cmd, &format)
	return cmd
}

// queryRequest parses field=value arguments for a query.
func queryRequest(r *read.Reader, name string, args []string) (read.Request, error) {
	req := read.Request{Query: name, Values: map[string]any{}}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return req, fmt.Errorf("%q: want field=value", a)
		}
		if _, dup := req.Values[k]; dup {
			return req, fmt.Errorf("%s is given twice", k)
		}
		val, err := r.ParseValue(name, k, v)
		if err != nil {
			return req, err
		}
		req.Values[k] = val
	}
	return req, nil
}

// writeQueryText prints rows as a table: the query's fields first, the rest
// by name; child lists as compact JSON; timestamps in RFC 3339.
func writeQueryText(w io.Writer, plan *schema.Plan, name string, res *read.Result) error {
	var ent *schema.Entity
	var first []string
	if q := plan.Query(name); q != nil {
		first = q.By
		if t := plan.Table(q.Table); t != nil {
			ent = plan.Entity(t.Entity)
		}
	}
	seen := map[string]bool{}
	var rest []string
	for _, row := range res.Rows {
		for k := range row {
			if !seen[k] {
				seen[k] = true
				rest = append(rest, k)
			}
		}
	}
	sort.Strings(rest)
	var cols []string
	for _, f := range first {
		if seen[f] {
			cols = append(cols, f)
		}
	}
	for _, f := range rest {
		if !contains(first, f) {
			cols = append(cols, f)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(cols) > 0 {
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	for _, row := range res.Rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = textValue(ent, c, row[c])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d rows", len(res.Rows))
	if res.DroppedStale > 0 || res.Repaired > 0 {
		fmt.Fprintf(w, ", %d stale index hits dropped, %d repaired", res.DroppedStale, res.Repaired)
	}
	fmt.Fprintln(w)
	if res.Next != "" {
		fmt.Fprintf(w, "more: --next %s\n", res.Next)
	}
	return nil
}

func textValue(ent *schema.Entity, field string, v any) string {
	if v == nil {
		return ""
	}
	if ent != nil {
		if f := ent.Field(field); f != nil && f.Type == rowkey.Timestamp {
			if ms, ok := v.(int64); ok {
				return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
			}
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return fmt.Sprintf("%q", x)
	case []map[string]any:
		// A child list is too wide for a table row: its size here, its
		// elements in --format json.
		return fmt.Sprintf("(%d)", len(x))
	}
	return fmt.Sprint(v)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
