package main

import (
	"github.com/spf13/cobra"

	"github.com/denorm/denorm/ddl"
)

func newDdlCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ddl SCHEMA",
		Short: "Print HBase shell create statements for a schema's tables",
		Long: `Print one HBase shell 'create' statement per table of the schema, with each
column family's settings (VERSIONS, TTL, COMPRESSION, DATA_BLOCK_ENCODING,
BLOCKSIZE, BLOOMFILTER, IN_MEMORY, MIN_VERSIONS, KEEP_DELETED_CELLS, IS_MOB,
MOB_THRESHOLD, BLOCKCACHE and the store engine in CONFIGURATION), the table's
DURABILITY, MAX_FILESIZE, REGION_REPLICATION, SPLIT_POLICY and max row size,
and SPLITS: one region per salt bucket when the key starts with salt(...), or
ops/table presplit regions evenly spaced over a leading hash(...). Binary split
keys are written as "\xNN" escapes, as the shell reads them. Keys that start
with a plain field get no splits; a comment above the statement says so.

Paste the output into 'hbase shell', or run 'hbase shell -n FILE'.

Exit codes: 0 success; 2 the schema could not be read or loaded, or bad usage.`,
		Example: `  denorm ddl examples/orders.yaml
  denorm ddl examples/device_events.yaml > create.rb && hbase shell -n create.rb`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := loadSchema(args[0])
			if err != nil {
				return err
			}
			return ddl.Write(cmd.OutOrStdout(), plan)
		},
	}
	return cmd
}
