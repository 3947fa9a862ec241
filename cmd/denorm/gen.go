package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/source"
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
		RunE: helpAndFail,
	}
	cmd.AddCommand(newGenOrdersCmd())
	return cmd
}

// genToKafka produces the generated stream to a topic, through a pipe so
// that the stream is never held in memory whole.
func genToKafka(cmd *cobra.Command, to string, opts gen.OrdersOptions) error {
	u, err := source.ParseKafkaURL(to)
	if err != nil {
		return usageError(err)
	}
	if u.Group != "" {
		return usageErrorf("--to %s: a consumer group means nothing to a producer", to)
	}
	pr, pw := io.Pipe()
	prog := genBar(cmd, opts)
	defer prog.done()
	go func() { pw.CloseWithError(gen.Orders(countingWriter{pw, prog}, opts)) }()
	n, err := source.ProduceLines(cmd.Context(), u, pr)
	pr.CloseWithError(err) // unblocks the generator if producing failed
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "produced %d events to %s\n", n, u.Topic)
	return nil
}

func newGenOrdersCmd() *cobra.Command {
	var opts gen.OrdersOptions
	var out, to string
	cmd := &cobra.Command{
		Use:   "orders --events N [--seed S] [--reorder P] [--duplicate P] [--out FILE | --to kafka://HOST:PORT/TOPIC]",
		Short: "Generate an order event stream for examples/orders.yaml",
		Long: `Write order change events as JSON lines (see docs/events.md): customers and
SKUs skewed (zipf), each order with 1 to 10 items, going through the status
lifecycle OPEN, PAID, SHIPPED (or CANCELLED). The same seed gives the same
stream. --reorder swaps a share of events with their successor and
--duplicate writes a share of them twice, as an at-least-once log would;
neither changes the orders themselves, so the applied state is the same.

--to produces the stream to a Kafka topic instead, one event per record,
keyed by entity and key so that every event of one order (or product) lands
in one partition, in order. A missing topic is created, with ?partitions=N
partitions (the broker's default without it).`,
		Example: `  denorm gen orders --events 10000 --seed 1 > orders.jsonl
  denorm gen orders --events 10000 --seed 1 --reorder 0.1 --duplicate 0.05 --out messy.jsonl
  denorm gen orders --events 10000 --to 'kafka://127.0.0.1:9092/orders?partitions=4'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Events <= 0 {
				return usageErrorf("--events must be positive")
			}
			if opts.Reorder < 0 || opts.Reorder > 1 || opts.Duplicate < 0 || opts.Duplicate > 1 || opts.Deletes < 0 || opts.Deletes > 1 || opts.Renames < 0 || opts.Renames > 1 || opts.PriceChanges < 0 || opts.PriceChanges > 1 || opts.HotSKU < 0 || opts.HotSKU > 1 {
				return usageErrorf("--reorder, --duplicate, --deletes, --renames, --price-changes and --hot-sku are shares between 0 and 1")
			}
			if to != "" {
				if out != "" {
					return usageErrorf("--out and --to exclude each other")
				}
				return genToKafka(cmd, to, opts)
			}
			prog := genBar(cmd, opts)
			defer prog.done()
			w := io.Writer(countingWriter{cmd.OutOrStdout(), prog})
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return usageError(err)
				}
				bw := bufio.NewWriter(countingWriter{f, prog})
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
	cmd.Flags().Float64Var(&opts.PriceChanges, "price-changes", 0, "share of events that change a product's price and keep its name (no order needs rewriting)")
	cmd.Flags().Float64Var(&opts.HotSKU, "hot-sku", 0, "share of order items on one best-selling SKU (sku00000), the skew of a hot counter row")
	cmd.Flags().IntVar(&opts.Customers, "customers", 0, "distinct customers (default events/5+1)")
	cmd.Flags().IntVar(&opts.SKUs, "skus", 0, "distinct SKUs (default 1000)")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of standard output")
	cmd.Flags().StringVar(&to, "to", "", "produce to this Kafka topic instead: kafka://HOST:PORT/TOPIC[?partitions=N]")
	return cmd
}

// genBar counts the events written on a bar over --events (duplicates and
// renames and price changes come on top: the total grows to meet them).
func genBar(cmd *cobra.Command, opts gen.OrdersOptions) *bar {
	return newBar(cmd.ErrOrStderr(), int64(opts.Events), "generating", "events", false)
}
