package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/store"
)

func newGetCmd() *cobra.Command {
	var (
		columns  []string
		versions int
		format   string
		dflags   decodeFlags
	)
	cmd := &cobra.Command{
		Use:   "get TABLE ROW",
		Short: "Read one row",
		Long: `Read one row of a table, like the HBase shell's get.

ROW, qualifiers and values are written and printed the way the HBase shell
does: printable ASCII as itself, any other byte as \xNN (so a backslash is
\x5C). A row that does not exist prints "0 row(s)" and is not an error.

--column limits the read to a family (d) or one column (d:s); repeat it for
more. --versions asks for up to N versions of each column, never more than
the family keeps.

--format json prints the same document as scan (see README.md, "JSON
output"), with zero or one row.

` + schemaReadHelp,
		Example: `  denorm get orders 'c42\x00\x7F'
  denorm get orders c42 --column d:s --column i --versions 3
  denorm get orders c42 --format json
  denorm get orders 'c000001\x00\x01\x7F\xFF\xFE_\x0B8\xBC;o00000149\x00\x01' --schema examples/orders.yaml`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			if versions < 1 {
				return usageErrorf("--versions %d: want at least 1", versions)
			}
			row, err := parseRow("row", args[1])
			if err != nil {
				return err
			}
			cols, err := parseColumns(columns)
			if err != nil {
				return err
			}
			dec, err := dflags.decoder(args[0])
			if err != nil {
				return err
			}
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)

			r, err := st.Get(cmd.Context(), args[0], store.Get{Row: row, Columns: cols, MaxVersions: versions})
			if err != nil {
				return fmt.Errorf("get %s from table %s: %w", args[1], args[0], err)
			}
			p := newRowPrinter(cmd.OutOrStdout(), format, args[0], true)
			p.dec = dec
			p.begin()
			if !r.Empty() {
				if err := p.row(r); err != nil {
					return err
				}
			}
			return p.end()
		},
	}
	cmd.Flags().StringArrayVar(&columns, "column", nil, "read only this family or fam:qual column (repeatable)")
	cmd.Flags().IntVar(&versions, "versions", 1, "versions of each column to read")
	addFormatFlag(cmd, &format)
	addDecodeFlags(cmd, &dflags)
	return cmd
}
