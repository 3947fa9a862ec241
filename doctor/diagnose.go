package doctor

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Sample is one region server seen once (Before nil: a saved file, whose
// counters are totals since each region opened) or twice an interval apart
// (counters become deltas over the interval).
type Sample struct {
	Before   *Snapshot
	After    *Snapshot
	Interval time.Duration
}

// Options are the thresholds; the zero value means the defaults.
type Options struct {
	HotFactor           float64 // a region is hot at this many times its table's median (10)
	MinRequests         float64 // below this many requests a region is too quiet to judge (100)
	BlockingStoreFiles  float64 // hbase.hstore.blockingStoreFiles (16)
	MaxRegionBytes      float64 // hbase.hregion.max.filesize (10 GiB)
	FilteredShare       float64 // share of filtered rows that makes reads-filtered (0.9)
	MaxRegionsPerServer float64 // regions per server above which the count is a problem (1000)
	MinUnbatched        int     // single mutations in the slow log that make puts-unbatched (10)
	UnbatchedRate       float64 // single-row puts and deletes a second on one table that make puts-unbatched (20)
}

func (o Options) withDefaults() Options {
	def := func(v *float64, d float64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.HotFactor, 10)
	def(&o.MinRequests, 100)
	def(&o.BlockingStoreFiles, 16)
	def(&o.MaxRegionBytes, 10<<30)
	def(&o.FilteredShare, 0.9)
	def(&o.MaxRegionsPerServer, 1000)
	def(&o.UnbatchedRate, 20)
	if o.MinUnbatched <= 0 {
		o.MinUnbatched = 10
	}
	return o
}

// Input is everything the doctor looks at in one run.
type Input struct {
	Samples []Sample
	Slow    []SlowCall
	Logs    []LogEvent
	// RegionOrder optionally maps a table (ns:table, or the bare name in the
	// default namespace) to its encoded region names in start-key order, as
	// store.Store's Regions lists them. /jmx has no start keys; with them a
	// hot region that is the table's last is told apart as the monotonic-key
	// signature.
	RegionOrder map[string][]string
	// RegionRanges optionally maps an encoded region name to its key range
	// as Finding.KeyRange shows it.
	RegionRanges map[string]string
	// LogSource and SlowSource name the files, for evidence.
	LogSource  string
	SlowSource string
}

// Diagnose turns the input into findings.
func Diagnose(in Input, opts Options) Report {
	opts = opts.withDefaults()
	samples := in.Samples[:0:0]
	for _, s := range in.Samples {
		if s.After != nil {
			samples = append(samples, s)
		}
	}
	in.Samples = samples
	var fs []Finding
	fs = append(fs, regionFindings(in.Samples, opts)...)
	fs = monotonic(fs, in.RegionOrder)
	for _, s := range in.Samples {
		fs = append(fs, serverFindings(s, opts)...)
		fs = append(fs, unbatchedFindings(s, opts)...)
	}
	fs = append(fs, slowFindings(in.Slow, in.SlowSource, opts)...)
	fs = append(fs, logFindings(in.Logs, in.LogSource)...)
	sortFindings(fs)
	if fs == nil {
		fs = []Finding{}
	}
	for i := range fs {
		if fs[i].Region != "" {
			fs[i].KeyRange = in.RegionRanges[fs[i].Region]
		}
	}
	return Report{Findings: fs}
}

// delta is the growth of a cumulative counter; a drop means the region
// reopened (or the server restarted) and the counter began again from zero.
func delta(before, after float64) float64 {
	if after < before {
		return after
	}
	return after - before
}

// counter reads a counter over the sample: the delta with two snapshots, the
// total with one.
func counter(before, after map[string]float64, name string) float64 {
	if before == nil {
		return after[name]
	}
	return delta(before[name], after[name])
}

func window(s Sample) string {
	if s.Before == nil {
		return "since the region opened"
	}
	return "in " + s.Interval.Round(time.Millisecond).String()
}

type regionLoad struct {
	reg      *Region
	server   string
	reads    float64
	writes   float64
	filtered float64
	window   string
}

func (l regionLoad) total() float64 { return l.reads + l.writes }

func regionFindings(samples []Sample, opts Options) []Finding {
	byTable := map[string][]regionLoad{}
	var fs []Finding
	familyFlagged := map[string]bool{}
	for _, s := range samples {
		for enc, reg := range s.After.Regions {
			if reg.Namespace == "hbase" {
				continue // system tables have their own access patterns
			}
			var before map[string]float64
			if s.Before != nil {
				if b := s.Before.Regions[enc]; b != nil {
					before = b.Metrics
				} else {
					before = map[string]float64{} // the region opened during the interval
				}
			}
			l := regionLoad{reg: reg, server: s.After.Server, window: window(s),
				reads:    counter(before, reg.Metrics, "readRequestCount"),
				writes:   counter(before, reg.Metrics, "writeRequestCount"),
				filtered: counter(before, reg.Metrics, "filteredReadRequestCount")}
			t := reg.FullTable()
			byTable[t] = append(byTable[t], l)
			fs = append(fs, storeFindings(reg, l.server, opts, familyFlagged)...)
			if l.filtered >= opts.MinRequests && l.filtered/(l.filtered+l.reads) >= opts.FilteredShare {
				fs = append(fs, newFinding("reads-filtered", t, enc, l.server,
					fmt.Sprintf("region %s of %s filtered away %.0f%% of the rows it read", enc, t, 100*l.filtered/(l.filtered+l.reads)),
					[]string{fmt.Sprintf("filteredReadRequestCount %.0f, readRequestCount %.0f %s", l.filtered, l.reads, l.window)}))
			}
		}
	}
	tables := make([]string, 0, len(byTable))
	for t := range byTable {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fs = append(fs, hotRegions(t, byTable[t], opts)...)
	}
	return fs
}

// hotRegions compares each region with the median of its table's other
// regions: against the median of all of them, one hot region among two
// could never stand out.
func hotRegions(table string, loads []regionLoad, opts Options) []Finding {
	if len(loads) < 2 {
		return nil
	}
	var fs []Finding
	for i, l := range loads {
		if l.total() < opts.MinRequests {
			continue
		}
		others := make([]float64, 0, len(loads)-1)
		for j, o := range loads {
			if j != i {
				others = append(others, o.total())
			}
		}
		med := median(others)
		if l.total() < opts.HotFactor*med || (med == 0 && l.total() < opts.MinRequests) {
			continue
		}
		ratio := "all of the table's requests"
		if med > 0 {
			ratio = fmt.Sprintf("%.0f times the median of the table's other regions", l.total()/med)
		}
		fs = append(fs, newFinding("region-hot", table, l.reg.Encoded, l.server,
			fmt.Sprintf("region %s of %s took %.0f requests %s, %s", l.reg.Encoded, table, l.total(), l.window, ratio),
			[]string{
				fmt.Sprintf("writeRequestCount %.0f, readRequestCount %.0f %s", l.writes, l.reads, l.window),
				fmt.Sprintf("median of the other %d regions: %.0f", len(others), med),
			}))
	}
	return fs
}

// monotonic turns region-hot into key-monotonic when the hot region is the
// last of its table by start key: new keys always sort after the old ones.
// The region-hot finding stays, as the evidence of the load.
func monotonic(fs []Finding, order map[string][]string) []Finding {
	for _, f := range fs {
		if f.Rule != "region-hot" {
			continue
		}
		regions := order[f.Table]
		if len(regions) < 2 || regions[len(regions)-1] != f.Region {
			continue
		}
		fs = append(fs, newFinding("key-monotonic", f.Table, f.Region, f.Server,
			fmt.Sprintf("the busiest region of %s is its last by start key: new rows go to the end of the key space", f.Table),
			append([]string{fmt.Sprintf("region %s is the last of %d", f.Region, len(regions))}, f.Evidence...)))
	}
	return fs
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func storeFindings(reg *Region, server string, opts Options, familyFlagged map[string]bool) []Finding {
	var fs []Finding
	t := reg.FullTable()
	if stores := reg.Metrics["storeCount"]; stores > 2 && !familyFlagged[t] {
		familyFlagged[t] = true
		fs = append(fs, newFinding("family-count", t, reg.Encoded, server,
			fmt.Sprintf("regions of %s have %.0f stores (one per column family)", t, stores),
			[]string{fmt.Sprintf("region %s storeCount %.0f", reg.Encoded, stores)}))
	}
	limit := 0.75 * opts.BlockingStoreFiles
	worst, worstName := 0.0, ""
	for fam, m := range reg.Stores {
		if m["storeFileCount"] > worst {
			worst, worstName = m["storeFileCount"], fam
		}
	}
	if worstName == "" && reg.Metrics["storeCount"] > 0 {
		worst = reg.Metrics["storeFileCount"] / reg.Metrics["storeCount"]
	}
	if worst >= limit {
		where := "its stores average"
		if worstName != "" {
			where = "family " + worstName + " has"
		}
		fs = append(fs, newFinding("store-files-blocking", t, reg.Encoded, server,
			fmt.Sprintf("region %s of %s: %s %.0f store files; writes block at %.0f", reg.Encoded, t, where, worst, opts.BlockingStoreFiles),
			[]string{fmt.Sprintf("storeFileCount %.0f, storeCount %.0f, compactionsQueuedCount %.0f",
				reg.Metrics["storeFileCount"], reg.Metrics["storeCount"], reg.Metrics["compactionsQueuedCount"])}))
	}
	if size := reg.Metrics["storeFileSize"]; size > opts.MaxRegionBytes {
		fs = append(fs, newFinding("region-size", t, reg.Encoded, server,
			fmt.Sprintf("region %s of %s holds %.1f GiB, over the %.0f GiB split size", reg.Encoded, t, size/(1<<30), opts.MaxRegionBytes/(1<<30)),
			[]string{fmt.Sprintf("storeFileSize %.0f", size)}))
	}
	return fs
}

func serverFindings(s Sample, opts Options) []Finding {
	var fs []Finding
	var bSrv, bIPC map[string]float64
	if s.Before != nil {
		bSrv, bIPC = s.Before.ServerMetrics, s.Before.IPC
	}
	srv, ipc := s.After.ServerMetrics, s.After.IPC
	name := s.After.Server
	w := window(s)
	if s.Before == nil {
		w = "since the server started"
	}
	if n := counter(bSrv, srv, "mutationsWithoutWALCount"); n > 0 {
		fs = append(fs, newFinding("wal-skipped", "", "", name,
			fmt.Sprintf("server %s applied %.0f mutations without writing the WAL %s", name, n, w),
			[]string{fmt.Sprintf("mutationsWithoutWALCount %.0f, mutationsWithoutWALSize %.0f", n, counter(bSrv, srv, "mutationsWithoutWALSize"))}))
	}
	blockedTime := counter(bSrv, srv, "updatesBlockedTime")
	blocked := counter(bSrv, srv, "blockedRequestCount")
	busy := counter(bIPC, ipc, "exceptions.RegionTooBusyException")
	if blockedTime > 0 || blocked > 0 || busy > 0 {
		fs = append(fs, newFinding("memstore-blocking", "", "", name,
			fmt.Sprintf("server %s blocked writes on full memstores %s", name, w),
			[]string{fmt.Sprintf("updatesBlockedTime %.0f ms, blockedRequestCount %.0f, exceptions.RegionTooBusyException %.0f", blockedTime, blocked, busy)}))
	}
	if n := counter(bIPC, ipc, "exceptions.callQueueTooBig"); n > 0 {
		fs = append(fs, newFinding("call-queue-full", "", "", name,
			fmt.Sprintf("server %s turned away %.0f calls with a full call queue %s", name, n, w),
			[]string{fmt.Sprintf("exceptions.callQueueTooBig %.0f, queueSize %.0f", n, ipc["queueSize"])}))
	}
	if n := counter(bIPC, ipc, "exceptions.UnknownScannerException"); n > 0 {
		fs = append(fs, newFinding("scanner-lease-expired", "", "", name,
			fmt.Sprintf("server %s saw %.0f calls on unknown (expired or closed) scanners %s", name, n, w),
			[]string{fmt.Sprintf("exceptions.UnknownScannerException %.0f", n)}))
	}
	if n := srv["regionCount"]; n > opts.MaxRegionsPerServer {
		fs = append(fs, newFinding("region-size", "", "", name,
			fmt.Sprintf("server %s carries %.0f regions; many small regions compete for memstore heap", name, n),
			[]string{fmt.Sprintf("regionCount %.0f", n)}))
	}
	return fs
}

func slowFindings(calls []SlowCall, source string, opts Options) []Finding {
	type group struct {
		n        int
		evidence []string
		region   string
	}
	scans := map[string]*group{}
	mutates := map[string]*group{}
	add := func(m map[string]*group, key string, c SlowCall) {
		g := m[key]
		if g == nil {
			g = &group{region: c.Region}
			m[key] = g
		}
		g.n++
		if len(g.evidence) < 5 {
			g.evidence = append(g.evidence, slowEvidence(source, c))
		}
	}
	for _, c := range calls {
		switch strings.ToLower(c.Method) {
		case "scan":
			add(scans, c.Table, c)
		case "mutate":
			add(mutates, c.Table, c)
		}
	}
	var fs []Finding
	for _, t := range sortedKeys(scans) {
		g := scans[t]
		fs = append(fs, newFinding("scan-unbounded", t, g.region, "",
			fmt.Sprintf("%d slow or oversized scans%s in the slow log", g.n, onTable(t)), g.evidence))
	}
	for _, t := range sortedKeys(mutates) {
		g := mutates[t]
		if g.n < opts.MinUnbatched {
			continue
		}
		fs = append(fs, newFinding("puts-unbatched", t, g.region, "",
			fmt.Sprintf("%d slow single-row mutations%s in the slow log; batched writes arrive as Multi calls", g.n, onTable(t)), g.evidence))
	}
	return fs
}

// slowEvidence says where a slow call was recorded and what it cost. A
// record of a JSON array has no line; the server that kept it, when known,
// says where to look further.
func slowEvidence(source string, c SlowCall) string {
	where := source
	if c.Line > 0 {
		where = fmt.Sprintf("%s line %d", source, c.Line)
	}
	kind := "slow"
	if c.TooLarge {
		kind = "large"
	}
	ev := fmt.Sprintf("%s: %s %s call, %.0f ms, %.0f bytes, client %s", where, kind, c.Method, c.ProcessingMs, c.ResponseSize, c.Client)
	if c.Server != "" {
		ev += ", server " + c.Server
	}
	if c.Region != "" {
		ev += ", region " + c.Region
	}
	return ev
}

func onTable(t string) string {
	if t == "" {
		return ""
	}
	return " on " + t
}

func logFindings(events []LogEvent, source string) []Finding {
	type group struct {
		n        int
		evidence []string
	}
	groups := map[[3]string]*group{}
	var keys [][3]string
	for _, e := range events {
		k := [3]string{e.Rule, e.Region, e.Server}
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
			keys = append(keys, k)
		}
		g.n++
		if len(g.evidence) < 5 {
			g.evidence = append(g.evidence, fmt.Sprintf("%s line %d: %s", source, e.Line, e.Text))
		}
	}
	var fs []Finding
	for _, k := range keys {
		g := groups[k]
		_, title, _ := ruleFor(k[0])
		msg := fmt.Sprintf("%d log lines: %s", g.n, strings.ToLower(title[:1])+title[1:])
		if k[1] != "" {
			msg += ", region " + k[1]
		}
		if k[2] != "" {
			msg += ", server " + k[2]
		}
		fs = append(fs, newFinding(k[0], "", k[1], k[2], msg, g.evidence))
	}
	return fs
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
