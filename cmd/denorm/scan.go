package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/store"
)

func newScanCmd() *cobra.Command {
	var (
		start, stop, prefix string
		limit, versions     int
		reverse             bool
		columns             []string
		format              string
		dflags              decodeFlags
	)
	cmd := &cobra.Command{
		Use:   "scan TABLE",
		Short: "Read rows in key order",
		Long: `Read the rows of a table in key order, like the HBase shell's scan.

Rows are read from --start (inclusive) to --stop (exclusive). With --reverse
rows come in descending order and, as in HBase, --start is then the upper
(inclusive) row and --stop the lower (exclusive) one. --prefix P reads the
rows that begin with P, that is [P, next(P)), in either direction; it cannot
be combined with --start or --stop.

--limit N stops after N rows. --column limits the read to a family (d) or one
column (d:s); repeat it for more. --versions asks for up to N versions of each
column.

Keys, qualifiers and values use the HBase shell's printable form (\xNN for
any byte that is not printable ASCII, and for the backslash).

--format json prints one document, {"table", "rows": [{"key", "key_base64",
"cells": [{"family", "qualifier", "qualifier_base64", "timestamp", "value",
"value_base64"}]}], "count"}; README.md describes it.

` + schemaReadHelp,
		Example: `  denorm scan orders
  denorm scan orders --prefix c42 --limit 10
  denorm scan orders --start c40 --stop c50 --column d:s
  denorm scan orders --prefix c42 --reverse --format json
  denorm scan orders --schema examples/orders.yaml --limit 1
  denorm scan daily_units --schema examples/orders.yaml --format json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			if versions < 1 {
				return usageErrorf("--versions %d: want at least 1", versions)
			}
			if limit < 0 {
				return usageErrorf("--limit %d: want 0 (no limit) or more", limit)
			}
			hasPrefix := cmd.Flags().Changed("prefix")
			if hasPrefix && (cmd.Flags().Changed("start") || cmd.Flags().Changed("stop")) {
				return usageErrorf("--prefix cannot be combined with --start or --stop")
			}
			cols, err := parseColumns(columns)
			if err != nil {
				return err
			}
			sc := store.Scan{Reverse: reverse, Limit: limit, Columns: cols, MaxVersions: versions}
			var pfx []byte
			if hasPrefix {
				if pfx, err = parseKey("--prefix", prefix); err != nil {
					return err
				}
				sc.Start, sc.Stop = prefixRange(pfx, reverse)
				if reverse && limit > 0 {
					// The first row of a reverse prefix scan may be next(P)
					// itself, which is dropped below.
					sc.Limit = limit + 1
				}
			} else {
				if sc.Start, err = parseKey("--start", start); err != nil {
					return err
				}
				if sc.Stop, err = parseKey("--stop", stop); err != nil {
					return err
				}
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

			ctx := cmd.Context()
			s, err := st.Scan(ctx, args[0], sc)
			if err != nil {
				return fmt.Errorf("scan table %s: %w", args[0], err)
			}
			defer s.Close()
			p := newRowPrinter(cmd.OutOrStdout(), format, args[0], false)
			p.dec = dec
			p.begin()
			for s.Next(ctx) {
				r := s.Row()
				if hasPrefix && !bytes.HasPrefix(r.Key, pfx) {
					if reverse && p.count == 0 && !rowBelow(r.Key, pfx) {
						continue // next(P) itself, the inclusive start of a reverse prefix scan
					}
					break // past the prefix
				}
				if err := p.row(r); err != nil {
					return err
				}
				if limit > 0 && p.count >= limit {
					break
				}
			}
			scanErr := s.Err()
			if err := p.end(); err != nil {
				return err
			}
			if scanErr != nil {
				return fmt.Errorf("scan table %s after %d rows: %w", args[0], p.count, scanErr)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&start, "start", "", "first row (inclusive; the upper row with --reverse)")
	f.StringVar(&stop, "stop", "", "row to stop before (exclusive; the lower row with --reverse)")
	f.StringVar(&prefix, "prefix", "", "read only rows starting with this prefix")
	f.IntVar(&limit, "limit", 0, "stop after this many rows (0: no limit)")
	f.BoolVar(&reverse, "reverse", false, "read rows in descending key order")
	f.StringArrayVar(&columns, "column", nil, "read only this family or fam:qual column (repeatable)")
	f.IntVar(&versions, "versions", 1, "versions of each column to read")
	addFormatFlag(cmd, &format)
	addDecodeFlags(cmd, &dflags)
	return cmd
}

// rowBelow reports whether key sorts before every key with prefix p.
func rowBelow(key, p []byte) bool { return bytes.Compare(key, p) < 0 }

// prefixRange turns a prefix into a store.Scan range. Forward it is exactly
// [p, next(p)). Reverse, Start is inclusive and Stop exclusive, and neither
// can name the range exactly: the scan starts at next(p), whose own row the
// caller skips, and has no lower bound, the caller stopping at the first row
// below p.
func prefixRange(p []byte, reverse bool) (start, stop []byte) {
	if !reverse {
		return p, rowkey.PrefixEnd(p)
	}
	return rowkey.PrefixEnd(p), nil
}
