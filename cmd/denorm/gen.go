package main

import (
	"bufio"
	"os"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/gen"
)

func newGenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate realistic event streams for trying denorm",
		Long: `Generate seeded, realistic change-event streams (JSON lines, see
docs/events.md) for trying denorm, for tests and for benchmarks.`,
		Example: `  denorm gen orders --events 10000 --seed 1 > orders.jsonl
  denorm apply --schema examples/orders.yaml --events orders.jsonl`,
		Args: usageArgs(cobra.NoArgs),
		RunE:  helpAndFail,
	}
	cmd.AddCommand(newGenOrdersCmd())
	return cmd
}

func newGenOrdersCmd() *cobra.Command {
	var opts gen.OrdersOptions
	var out string
	cmd := &cobra.Command{
		Use:   "orders --events N [--seed S] [--reorder P] [--duplicate P] [--out FILE]",
		Short: "Generate an order event stream for examples/orders.yaml",
		Long: `Write order change events as JSON lines (see docs/events.md): customers and
SKUs skewed (zipf), each order with 1 to 10 items, going through the status
lifecycle OPEN, PAID, SHIPPED (or CANCELLED). The same seed gives the same
stream. --reorder swaps a share of events with their successor and
--duplicate writes a share of them twice, as an at-least-once log would;
neither changes the orders themselves, so the applied state is the same.`,
		Example: `  denorm gen orders --events 10000 --seed 1 > orders.jsonl
  denorm gen orders --events 10000 --seed 1 --reorder 0.1 --duplicate 0.05 --out messy.jsonl`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Events <= 0 {
				return usageErrorf("--events must be positive")
			}
			if opts.Reorder < 0 || opts.Reorder > 1 || opts.Duplicate < 0 || opts.Duplicate > 1 || opts.Deletes < 0 || opts.Deletes > 1 || opts.Renames < 0 || opts.Renames > 1 {
				return usageErrorf("--reorder, --duplicate, --deletes and --renames are shares between 0 and 1")
			}
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return usageError(err)
				}
				bw := bufio.NewWriter(f)
				if err := gen.Orders(bw, opts); err != nil {
					f.Close()
					return err
				}
				if err := bw.Flush(); err != nil {
					f.Close()
					return err
				}
				return f.Close()
			}
			return gen.Orders(w, opts)
		},
	}
	cmd.Flags().IntVar(&opts.Events, "events", 1000, "number of events")
	cmd.Flags().Int64Var(&opts.Seed, "seed", 1, "random seed")
	cmd.Flags().Float64Var(&opts.Reorder, "reorder", 0, "share of events swapped with the next one")
	cmd.Flags().Float64Var(&opts.Duplicate, "duplicate", 0, "share of events written twice")
	cmd.Flags().Float64Var(&opts.Deletes, "deletes", 0, "share of updates that delete the order instead")
	cmd.Flags().Float64Var(&opts.Renames, "renames", 0.01, "share of events that rename a product (orders copy product names live)")
	cmd.Flags().IntVar(&opts.Customers, "customers", 0, "distinct customers (default events/5+1)")
	cmd.Flags().IntVar(&opts.SKUs, "skus", 0, "distinct SKUs (default 1000)")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of standard output")
	return cmd
}
