package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/doctor"
	"github.com/denorm/denorm/store"
)

func newTableCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table",
		Short: "Create, describe, list and drop tables",
		Long: `Manage the tables of the store that --store names: create them with their
column families and split keys, describe them, list them and drop them.`,
		Example: `  denorm table create orders --family d:versions=1,compression=SNAPPY --family i --split c4 --split c8
  denorm table describe orders
  denorm table list
  denorm table drop orders`,
		Args: usageArgs(cobra.NoArgs),
		RunE: helpAndFail,
	}
	cmd.AddCommand(newTableCreateCmd(), newTableDescribeCmd(), newTableListCmd(), newTableDropCmd())
	return cmd
}

func newTableCreateCmd() *cobra.Command {
	var (
		families   []string
		splits     []string
		splitsFile string
	)
	cmd := &cobra.Command{
		Use:   "create NAME --family SPEC [--family SPEC ...] [--split KEY ...] [--splits-file FILE]",
		Short: "Create a table with its column families and split keys",
		Long: `Create a table. Each --family gives one column family:

  NAME[:key=value,key=value,...]

with these settings (HBase's defaults when left out):

  versions=N          versions kept per column (1)
  ttl=T               time to live against the cell timestamp: FOREVER (the
                      default), seconds (86400), a duration (36h) or days and
                      weeks (7d, 2w); whole seconds only
  compression=C       NONE, SNAPPY, GZ, LZ4, LZO, ZSTD, BZIP2, LZMA or BROTLI
  encoding=E          data block encoding: NONE, PREFIX, DIFF, FAST_DIFF or
                      ROW_INDEX_V1
  bloom=B             bloom filter: NONE, ROW, ROWCOL or ROWPREFIX_FIXED_LENGTH
  blocksize=S         block size in bytes (65536, 64K)
  in_memory=BOOL      keep the family's blocks in the in-memory cache tier
  min_versions=N      versions a TTL leaves (0)
  keep_deleted_cells=K  FALSE, TRUE or TTL: deleted cells stay readable by
                      time-range reads
  mob=BOOL            store values over mob_threshold (100K) as MOB files
  mob_threshold=S     the MOB threshold in bytes (102400, 100K)
  blockcache=BOOL     cache the family's blocks (true)
  compaction=E        the store engine: default, date_tiered or stripe

The embedded store honours versions, ttl and min_versions, refuses
keep_deleted_cells and records the rest; HBase applies them all.

Split keys pre-split the table into regions: give each with --split (in the
HBase shell's printable form, \xNN for other bytes) or one a line in
--splits-file ('-' reads standard input; blank lines and lines starting with
# are skipped). Keys are sorted; an empty or repeated key is an error.`,
		Example: `  denorm table create orders --family d:versions=1,compression=SNAPPY,encoding=FAST_DIFF --family i
  denorm table create events --family e:versions=3,ttl=7d,bloom=ROW --split '\x40' --split '\x80' --split '\xC0'
  denorm table create users --family u --splits-file splits.txt`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := store.CheckTableName(args[0]); err != nil {
				return usageError(err)
			}
			spec := store.TableSpec{Name: args[0]}
			if spec.Name == "" {
				return usageErrorf("empty table name")
			}
			if len(families) == 0 {
				return usageErrorf("table %s: give at least one --family", spec.Name)
			}
			seen := map[string]bool{}
			for _, s := range families {
				f, err := parseFamilySpec(s)
				if err != nil {
					return usageErrorf("--family %q: %w", s, err)
				}
				if seen[f.Name] {
					return usageErrorf("--family %s given twice", f.Name)
				}
				seen[f.Name] = true
				spec.Families = append(spec.Families, f)
			}
			var keys [][]byte
			for _, s := range splits {
				k, err := parseKey("--split", s)
				if err != nil {
					return err
				}
				keys = append(keys, k)
			}
			if splitsFile != "" {
				fk, err := loadSplitsFile(cmd.InOrStdin(), splitsFile)
				if err != nil {
					return usageError(err)
				}
				keys = append(keys, fk...)
			}
			if spec.SplitKeys, err = normalizeSplits(keys); err != nil {
				return usageError(err)
			}

			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			if err := st.CreateTable(cmd.Context(), spec); err != nil {
				return fmt.Errorf("create table %s: %w", spec.Name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created table %s: %d families, %d regions\n",
				spec.Name, len(spec.Families), len(spec.SplitKeys)+1)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&families, "family", nil, "column family NAME[:key=value,...] (repeatable; at least one)")
	f.StringArrayVar(&splits, "split", nil, "split key, the first row of a region (repeatable)")
	f.StringVar(&splitsFile, "splits-file", "", "file of split keys, one a line ('-' for standard input)")
	return cmd
}

func loadSplitsFile(stdin io.Reader, name string) ([][]byte, error) {
	if name == "-" {
		return readSplitsFile(stdin, "standard input")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--splits-file: %w", err)
	}
	defer f.Close()
	return readSplitsFile(f, name)
}

// jsonTable is the --format json shape of table describe; README.md
// documents it. Keys are in printable form.
type jsonTable struct {
	Name      string       `json:"name"`
	Families  []jsonFamily `json:"families"`
	SplitKeys []string     `json:"split_keys"`
	Regions   []jsonRegion `json:"regions,omitempty"`
	// RequestCounts says where the regions' request counts come from:
	// "store" (the backend keeps them), "jmx" (read from --jmx) or
	// "unknown" (HBase through Thrift2 without --jmx: the counts are 0).
	RequestCounts string `json:"request_counts"`
}

type jsonFamily struct {
	Name              string `json:"name"`
	Versions          int    `json:"versions"`
	TTLSeconds        int64  `json:"ttl_seconds"` // 0: forever
	Compression       string `json:"compression"`
	DataBlockEncoding string `json:"data_block_encoding"`
	BloomFilter       string `json:"bloom_filter"`
	BlockSize         int    `json:"block_size"`
	InMemory          bool   `json:"in_memory"`
	// Settings beyond HBase's basic ones, present only when set.
	MinVersions      int    `json:"min_versions,omitempty"`
	KeepDeletedCells string `json:"keep_deleted_cells,omitempty"`
	MOB              bool   `json:"mob,omitempty"`
	MOBThreshold     int64  `json:"mob_threshold,omitempty"`
	BlockCacheOff    bool   `json:"blockcache_off,omitempty"`
	Compaction       string `json:"compaction,omitempty"`
}

type jsonRegion struct {
	ID            string `json:"id"`
	Start         string `json:"start"`
	End           string `json:"end"`
	Server        string `json:"server,omitempty"`
	ReadRequests  int64  `json:"read_requests"`
	WriteRequests int64  `json:"write_requests"`
}

// HBase's defaults, shown where a family left a setting to the backend.
const (
	defaultBlockSize = 64 << 10
	defaultBloom     = "ROW"
)

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func describeJSON(spec store.TableSpec, regions []store.Region) jsonTable {
	t := jsonTable{Name: spec.Name, SplitKeys: []string{}}
	for _, f := range spec.Families {
		bs := f.BlockSize
		if bs == 0 {
			bs = defaultBlockSize
		}
		t.Families = append(t.Families, jsonFamily{
			Name:              f.Name,
			Versions:          f.Versions(),
			TTLSeconds:        int64(f.TTL / time.Second),
			Compression:       orDefault(f.Compression, "NONE"),
			DataBlockEncoding: orDefault(f.DataBlockEncoding, "NONE"),
			BloomFilter:       orDefault(f.BloomFilter, defaultBloom),
			BlockSize:         bs,
			InMemory:          f.InMemory,
			MinVersions:       f.MinVersions,
			KeepDeletedCells:  f.KeepDeletedCells,
			MOB:               f.MOB,
			MOBThreshold:      f.MOBThreshold,
			BlockCacheOff:     f.NoBlockCache,
			Compaction:        f.Compaction,
		})
	}
	for _, k := range spec.SplitKeys {
		t.SplitKeys = append(t.SplitKeys, store.Printable(k))
	}
	for _, r := range regions {
		t.Regions = append(t.Regions, jsonRegion{
			ID: r.ID, Start: store.Printable(r.Start), End: store.Printable(r.End), Server: r.Server,
			ReadRequests: r.ReadRequests, WriteRequests: r.WriteRequests,
		})
	}
	return t
}

func newTableDescribeCmd() *cobra.Command {
	var (
		format string
		jmx    []string
	)
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a table's families, split keys and regions",
		Long: `Show a table's column families with their settings, in the HBase shell's
describe style, then its split keys and its regions with their read and write
request counts (cumulative since the region opened; the embedded store keeps
them too, so hot regions show up locally).

HBase's Thrift2 gateway has no request counts: on HBase they print as
"unknown" unless --jmx names the RegionServers' /jmx endpoints (or saved /jmx
JSON files), which are then read for them.

--format json prints {"name", "families": [{"name", "versions", "ttl_seconds"
(0: forever), "compression", "data_block_encoding", "bloom_filter",
"block_size", "in_memory", and when set "min_versions", "keep_deleted_cells",
"mob", "mob_threshold", "blockcache_off", "compaction"}], "split_keys": [...],
"regions": [{"id", "start", "end", "server", "read_requests",
"write_requests"}], "request_counts" ("store", "jmx" or "unknown": then the
counts are 0)}, keys in printable form.`,
		Example: `  denorm table describe orders
  denorm table describe orders --format json
  denorm --store hbase://127.0.0.1:9090 table describe orders --jmx http://127.0.0.1:16030/jmx`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			ctx := cmd.Context()
			spec, err := st.DescribeTable(ctx, args[0])
			if err != nil {
				return fmt.Errorf("describe table %s: %w", args[0], err)
			}
			regions, err := st.Regions(ctx, args[0])
			if err != nil && !errors.Is(err, store.ErrUnsupported) {
				return fmt.Errorf("list regions of table %s: %w", args[0], err)
			}
			t := describeJSON(spec, regions)
			t.RequestCounts = "store"
			if rc, ok := st.(interface{ KeepsRequestCounts() bool }); ok && !rc.KeepsRequestCounts() {
				t.RequestCounts = "unknown"
			}
			if len(jmx) > 0 {
				if err := jmxRequestCounts(ctx, jmx, args[0], &t); err != nil {
					return err
				}
				t.RequestCounts = "jmx"
			}
			if format == formatJSON {
				return writeJSON(cmd.OutOrStdout(), t)
			}
			return writeDescribeText(cmd.OutOrStdout(), t)
		},
	}
	addFormatFlag(cmd, &format)
	cmd.Flags().StringArrayVar(&jmx, "jmx", nil, "RegionServer /jmx URL or saved /jmx JSON file to read request counts from (repeatable)")
	return cmd
}

// jmxRequestCounts fills the regions' request counts from the region
// servers' /jmx, which key them by encoded region name. A region no
// endpoint reports keeps 0.
func jmxRequestCounts(ctx context.Context, sources []string, table string, t *jsonTable) error {
	byID := map[string]*doctor.Region{}
	for _, src := range sources {
		var snap *doctor.Snapshot
		var err error
		if doctor.IsURL(src) {
			snap, err = doctor.FetchJMX(ctx, &http.Client{Timeout: 10 * time.Second}, src)
			if err != nil {
				return fmt.Errorf("--jmx %s: %w", src, err)
			}
		} else if snap, err = doctor.ReadJMXFile(src); err != nil {
			return usageError(fmt.Errorf("--jmx %s: %w", src, err))
		}
		for _, r := range snap.Regions {
			if r.FullTable() == table {
				byID[r.Encoded] = r
			}
		}
	}
	for i := range t.Regions {
		if r := byID[t.Regions[i].ID]; r != nil {
			t.Regions[i].ReadRequests = int64(r.Metrics["readRequestCount"])
			t.Regions[i].WriteRequests = int64(r.Metrics["writeRequestCount"])
		}
	}
	return nil
}

func writeDescribeText(out io.Writer, t jsonTable) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "Table %s\n", t.Name)
	fmt.Fprintln(w, "COLUMN FAMILIES DESCRIPTION")
	for _, f := range t.Families {
		ttl := "FOREVER"
		if f.TTLSeconds > 0 {
			ttl = strconv.FormatInt(f.TTLSeconds, 10) + " SECONDS (" + humanTTL(f.TTLSeconds) + ")"
		}
		extra := ""
		if f.MinVersions > 0 {
			extra += fmt.Sprintf(", MIN_VERSIONS => '%d'", f.MinVersions)
		}
		if f.KeepDeletedCells != "" {
			extra += fmt.Sprintf(", KEEP_DELETED_CELLS => '%s'", f.KeepDeletedCells)
		}
		if f.MOB {
			extra += ", IS_MOB => 'true'"
			if f.MOBThreshold > 0 {
				extra += fmt.Sprintf(", MOB_THRESHOLD => '%d'", f.MOBThreshold)
			}
		}
		if f.BlockCacheOff {
			extra += ", BLOCKCACHE => 'false'"
		}
		if f.Compaction != "" {
			extra += fmt.Sprintf(", COMPACTION => '%s'", f.Compaction)
		}
		fmt.Fprintf(w, "{NAME => '%s', VERSIONS => '%d', TTL => '%s', COMPRESSION => '%s', DATA_BLOCK_ENCODING => '%s', BLOOMFILTER => '%s', BLOCKSIZE => '%d', IN_MEMORY => '%t'%s}\n",
			f.Name, f.Versions, ttl, f.Compression, f.DataBlockEncoding, f.BloomFilter, f.BlockSize, f.InMemory, extra)
	}
	fmt.Fprintf(w, "%d column families\n", len(t.Families))
	if len(t.SplitKeys) == 0 {
		fmt.Fprintln(w, "SPLIT KEYS none")
	} else {
		fmt.Fprintf(w, "SPLIT KEYS %s\n", strings.Join(t.SplitKeys, " "))
	}
	if len(t.Regions) > 0 {
		fmt.Fprintln(w, "REGIONS")
		for _, r := range t.Regions {
			start, end := r.Start, r.End
			if start == "" {
				start = "(first)"
			}
			if end == "" {
				end = "(last)"
			}
			reads, writes := strconv.FormatInt(r.ReadRequests, 10), strconv.FormatInt(r.WriteRequests, 10)
			if t.RequestCounts == "unknown" {
				reads, writes = "unknown", "unknown"
			}
			fmt.Fprintf(w, " [%s, %s) id=%s reads=%s writes=%s", start, end, r.ID, reads, writes)
			if r.Server != "" {
				fmt.Fprintf(w, " server=%s", r.Server)
			}
			fmt.Fprintln(w)
		}
	}
	if t.RequestCounts == "unknown" && len(t.Regions) > 0 {
		fmt.Fprintln(w, "request counts unknown: HBase's Thrift2 gateway has none; --jmx http://REGIONSERVER:16030/jmx reads them")
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// humanTTL renders seconds as days, hours, minutes and seconds, as the HBase
// shell does after the raw number.
func humanTTL(s int64) string {
	var parts []string
	for _, u := range []struct {
		n    int64
		name string
	}{{86400, "DAYS"}, {3600, "HOURS"}, {60, "MINUTES"}, {1, "SECONDS"}} {
		if s >= u.n {
			parts = append(parts, fmt.Sprintf("%d %s", s/u.n, u.name))
			s %= u.n
		}
	}
	return strings.Join(parts, " ")
}

func newTableListCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tables",
		Long: `List the tables of the store in name order.

--format json prints {"tables": ["name", ...]}.`,
		Example: `  denorm table list
  denorm --store hbase://127.0.0.1:9090 table list --format json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkFormat(format); err != nil {
				return err
			}
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			names, err := st.ListTables(cmd.Context())
			if err != nil {
				return fmt.Errorf("list tables: %w", err)
			}
			if names == nil {
				names = []string{}
			}
			out := cmd.OutOrStdout()
			if format == formatJSON {
				return writeJSON(out, struct {
					Tables []string `json:"tables"`
				}{names})
			}
			w := bufio.NewWriter(out)
			fmt.Fprintln(w, "TABLE")
			for _, n := range names {
				fmt.Fprintln(w, n)
			}
			fmt.Fprintf(w, "%d row(s)\n", len(names))
			if err := w.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
			return nil
		},
	}
	addFormatFlag(cmd, &format)
	return cmd
}

func newTableDropCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "drop NAME",
		Short: "Delete a table and all its data",
		Long: `Delete a table and every cell in it. There is no undo and no confirmation
(unlike the HBase shell, there is no separate disable step).`,
		Example: `  denorm table drop orders`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			if err := st.DropTable(cmd.Context(), args[0]); err != nil {
				return fmt.Errorf("drop table %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dropped table %s\n", args[0])
			return nil
		},
	}
}
