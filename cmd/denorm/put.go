package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/store"
)

func newPutCmd() *cobra.Command {
	var ts int64
	cmd := &cobra.Command{
		Use:   "put TABLE ROW FAMILY:QUALIFIER VALUE",
		Short: "Write one cell",
		Long: `Write one cell, like the HBase shell's put.

ROW, QUALIFIER and VALUE use the HBase shell's printable form: \xNN stands for
the byte NN (hex), so 'a\x00b' is three bytes and a backslash is \x5C. The
column must name a family of the table; an empty qualifier is written d:.

Without --ts the store stamps the cell with its clock (milliseconds since the
epoch), as HBase does. denorm's own writer always gives timestamps (entity
versions); give --ts to write cells the way it does.`,
		Example: `  denorm put orders c42 d:s open --ts 3
  denorm put orders 'c42\x00' 'i:\x00\x00\x00\x01' 'sku-9'`,
		Args: usageArgs(cobra.ExactArgs(4)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			table := args[0]
			row, err := parseRow("row", args[1])
			if err != nil {
				return err
			}
			if !strings.Contains(args[2], ":") {
				return usageErrorf("column %q: want FAMILY:QUALIFIER (use %s: for an empty qualifier)", args[2], args[2])
			}
			col, err := parseColumn(args[2])
			if err != nil {
				return usageError(err)
			}
			val, err := parseKey("value", args[3])
			if err != nil {
				return err
			}
			if ts < 0 {
				return usageErrorf("--ts %d: want 0 or more", ts)
			}
			stamp := store.LatestTimestamp
			if cmd.Flags().Changed("ts") {
				stamp = ts
			}
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			m := store.RowMutation{Row: row, Mutations: []store.Mutation{{
				Kind: store.Put, Family: col.Family, Qualifier: col.Qualifier, Timestamp: stamp, Value: val,
			}}}
			if err := st.Mutate(cmd.Context(), table, m); err != nil {
				return fmt.Errorf("put %s %s in table %s: %w", args[1], args[2], table, err)
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&ts, "ts", 0, "cell timestamp (default: the store's clock, in ms)")
	return cmd
}
