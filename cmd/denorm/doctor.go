package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/doctor"
	"github.com/denorm/denorm/store"
)

func newDoctorCmd() *cobra.Command {
	var (
		jmx      []string
		interval time.Duration
		slowlog  string
		logFile  string
		format   string
	)
	cmd := &cobra.Command{
		Use:   "doctor [--jmx URL|FILE ...] [--interval D] [--slowlog FILE|URL] [--log FILE] [--format text|json]",
		Short: "Find anti-patterns in a running cluster from /jmx, the slow log and client logs",
		Long: `Read the signatures HBase anti-patterns leave in a running cluster and name
the catalogue rule behind each: request skew by region, store files near the
blocking limit, too many stores per region, blocked memstores, a full call
queue, expired scanners, mutations without the WAL, reads mostly filtered,
oversized regions, tables written a row per call, and the exceptions of
client logs and the slow log.

--jmx takes RegionServer /jmx endpoints (http://host:16030/jmx), sampled twice
--interval apart because the counters are cumulative, or saved /jmx JSON
files, read once (their counters are totals since each region opened).
--slowlog takes a saved slow log (the records as JSON, or region server log
lines holding (responseTooSlow) or (responseTooLarge)), or an hbase:// URL
of a Thrift2 gateway, through which the region servers' online slow logs are
read live (HBase 2.4+ with hbase.regionserver.slowlog.buffer.enabled); --log
takes a client log file. docs/doctor.md lists the
cluster-only rule ids; docs/rules.md the shared ones. With --store, the
tables' regions are listed in start-key order, so that a hot region which is
its table's last (the monotonic-key signature) is reported as key-monotonic,
and each finding about a region gives the region's rows, [start, end).

Formats: text, or json (stable: {"findings":[{"rule","severity","table",
"region","key_range","server","message","evidence","fix"}],"summary":{"error",
"warning","info"}}; key_range is "" without --store).

Exit codes: 0 no error findings; 1 at least one error finding; 2 bad usage or
an input that could not be read.`,
		Example: `  denorm doctor --jmx http://rs1:16030/jmx --jmx http://rs2:16030/jmx --interval 30s
  denorm doctor --jmx saved-jmx.json --log client.log --format json
  denorm doctor --store hbase://gateway:9090 --jmx http://rs1:16030/jmx
  denorm doctor --slowlog hbase://gateway:9090`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if len(jmx) == 0 && slowlog == "" && logFile == "" {
				return usageErrorf("nothing to examine: give --jmx, --slowlog or --log")
			}
			if interval <= 0 {
				return usageErrorf("--interval %s: want a positive duration", interval)
			}
			in, err := doctorInput(cmd.Context(), jmx, interval, slowlog, logFile)
			if err != nil {
				return err
			}
			if f := cmd.Flag("store"); f != nil && f.Changed {
				if in.RegionOrder, in.RegionRanges, err = regionOrder(cmd, in.Samples); err != nil {
					return err
				}
			}
			rep := doctor.Diagnose(in, doctor.Options{})
			if err := doctor.Write(cmd.OutOrStdout(), rep, format); err != nil {
				return err
			}
			if rep.HasErrors() {
				return problemsFound()
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&jmx, "jmx", nil, "RegionServer /jmx URL or saved /jmx JSON file (repeatable)")
	cmd.Flags().DurationVar(&interval, "interval", 10*time.Second, "time between the two samples of each live /jmx endpoint; region metrics refresh every 5 s by default")
	cmd.Flags().StringVar(&slowlog, "slowlog", "", "slow-log file (records as JSON, or (responseTooSlow) log lines), or hbase://host:port to read the servers' online slow logs")
	cmd.Flags().StringVar(&logFile, "log", "", "client log file to search for exceptions")
	addFormatFlag(cmd, &format)
	return cmd
}

// doctorInput gathers every source. Live endpoints are all sampled, then
// sampled again one interval later, so the wait is paid once.
func doctorInput(ctx context.Context, jmx []string, interval time.Duration, slowlog, logFile string) (doctor.Input, error) {
	var in doctor.Input
	client := &http.Client{Timeout: 30 * time.Second}
	var live []string
	for _, src := range jmx {
		if doctor.IsURL(src) {
			live = append(live, src)
			continue
		}
		snap, err := doctor.ReadJMXFile(src)
		if err != nil {
			return in, usageError(err)
		}
		in.Samples = append(in.Samples, doctor.Sample{After: snap})
	}
	if len(live) > 0 {
		first := make([]*doctor.Snapshot, len(live))
		for i, u := range live {
			s, err := doctor.FetchJMX(ctx, client, u)
			if err != nil {
				return in, usageError(err)
			}
			first[i] = s
		}
		start := time.Now()
		select {
		case <-time.After(interval):
		case <-ctx.Done():
			return in, ctx.Err()
		}
		for i, u := range live {
			s, err := doctor.FetchJMX(ctx, client, u)
			if err != nil {
				return in, usageError(err)
			}
			in.Samples = append(in.Samples, doctor.Sample{Before: first[i], After: s, Interval: time.Since(start).Round(time.Second)})
		}
	}
	if slowlog != "" {
		var err error
		if in.Slow, err = readSlowLog(ctx, slowlog); err != nil {
			return in, err
		}
		in.SlowSource = slowlog
	}
	if logFile != "" {
		f, err := os.Open(logFile)
		if err != nil {
			return in, usageError(fmt.Errorf("log: %w", err))
		}
		defer f.Close()
		in.Logs, err = doctor.ParseClientLog(f)
		if err != nil {
			return in, usageError(err)
		}
		in.LogSource = logFile
	}
	return in, nil
}

// regionOrder lists, through the store, the regions of every table the
// samples mention, in key order, and each region's key range. Tables /jmx
// still reports after they were dropped cannot be listed; they are left out
// rather than failing the run.
func regionOrder(cmd *cobra.Command, samples []doctor.Sample) (order map[string][]string, ranges map[string]string, err error) {
	st, err := openStore(cmd)
	if err != nil {
		return nil, nil, err
	}
	defer closeStore(st, &err)
	order, ranges = map[string][]string{}, map[string]string{}
	for _, s := range samples {
		for _, r := range s.After.Regions {
			t := r.FullTable()
			if r.Namespace == "hbase" || order[t] != nil {
				continue
			}
			regions, lerr := st.Regions(cmd.Context(), t)
			if lerr != nil {
				order[t] = []string{}
				continue
			}
			for _, reg := range regions {
				order[t] = append(order[t], reg.ID)
				ranges[reg.ID] = keyRange(reg)
			}
		}
	}
	return order, ranges, nil
}

// keyRange prints a region's rows as [start, end), the table's first and
// last regions open-ended, as table describe does.
func keyRange(r store.Region) string {
	start, end := "(first)", "(last)"
	if len(r.Start) > 0 {
		start = store.Printable(r.Start)
	}
	if len(r.End) > 0 {
		end = store.Printable(r.End)
	}
	return "[" + start + ", " + end + ")"
}
