package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/store"
)

func newDeleteCmd() *cobra.Command {
	var (
		ts          int64
		allVersions bool
	)
	cmd := &cobra.Command{
		Use:   "delete TABLE ROW [FAMILY[:QUALIFIER]]",
		Short: "Delete a row, a family, a column or one version",
		Long: `Delete from one row, writing an HBase delete marker:

  delete TABLE ROW                       the whole row (every family)
  delete TABLE ROW FAMILY                every column of the family
  delete TABLE ROW FAMILY:QUALIFIER      one version of the column
  delete TABLE ROW FAMILY:QUALIFIER --all-versions
                                         every version of the column

A marker masks the cells at or below its timestamp. Without --ts the row,
family and --all-versions deletes use the store's clock (milliseconds since
the epoch), so they mask every cell written with a smaller timestamp, even
cells written after the delete, until a major compaction purges the marker:
with denorm's version timestamps that is most cells. Give --ts to delete
only up to a version.

A one-version delete without --ts removes the newest version: it reads the
column first, so it is not atomic with concurrent writers. With --ts it
removes exactly the version at that timestamp.`,
		Example: `  denorm delete orders c42 d:s --ts 3
  denorm delete orders c42 d:s --all-versions --ts 10
  denorm delete orders c42 i
  denorm delete orders c42`,
		Args: usageArgs(cobra.RangeArgs(2, 3)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			table := args[0]
			row, err := parseRow("row", args[1])
			if err != nil {
				return err
			}
			if ts < 0 {
				return usageErrorf("--ts %d: want 0 or more", ts)
			}
			hasTS := cmd.Flags().Changed("ts")
			stamp := store.LatestTimestamp
			if hasTS {
				stamp = ts
			}
			mut := store.Mutation{Kind: store.DeleteRow, Timestamp: stamp}
			what := "row " + args[1]
			if len(args) == 3 {
				col, err := parseColumn(args[2])
				if err != nil {
					return usageError(err)
				}
				mut.Family, mut.Qualifier = col.Family, col.Qualifier
				what = "column " + args[2] + " of row " + args[1]
				switch {
				case col.Qualifier == nil:
					mut.Kind = store.DeleteFamily
					what = "family " + col.Family + " of row " + args[1]
				case allVersions:
					mut.Kind = store.DeleteColumn
				default:
					mut.Kind = store.DeleteVersion
				}
			} else if allVersions {
				return usageErrorf("--all-versions needs a FAMILY:QUALIFIER; a row delete already covers every version")
			}

			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			ctx := cmd.Context()

			if mut.Kind == store.DeleteVersion && !hasTS {
				r, err := st.Get(ctx, table, store.Get{Row: row, Columns: []store.Column{{Family: mut.Family, Qualifier: mut.Qualifier}}})
				if err != nil {
					return fmt.Errorf("delete %s from table %s: read the newest version: %w", what, table, err)
				}
				c, ok := r.Latest(mut.Family, mut.Qualifier)
				if !ok {
					fmt.Fprintf(cmd.ErrOrStderr(), "denorm delete: %s has no version to delete\n", what)
					return nil
				}
				mut.Timestamp = c.Timestamp
			}
			if err := st.Mutate(ctx, table, store.RowMutation{Row: row, Mutations: []store.Mutation{mut}}); err != nil {
				return fmt.Errorf("delete %s from table %s: %w", what, table, err)
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&ts, "ts", 0, "delete at or below this timestamp (one version: exactly this one)")
	cmd.Flags().BoolVar(&allVersions, "all-versions", false, "delete every version of the column, not one")
	return cmd
}
