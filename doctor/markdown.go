package doctor

import (
	"fmt"
	"strings"
)

// RulesMarkdown renders docs/doctor.md: what `denorm doctor` reads and the
// cluster-only rules. The review package's generator renders only its own
// catalogue, so the doctor keeps its ids in a document of its own; a test
// keeps the file equal to this output.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("# denorm doctor\n\n")
	b.WriteString("<!-- Generated from doctor/rules.go by `go test ./doctor -run TestDoctorDoc -update`.\n")
	b.WriteString("     Do not edit by hand. -->\n\n")
	b.WriteString("`denorm doctor` reads what anti-patterns leave behind in a running cluster and names the\n")
	b.WriteString("rule behind each finding. Where the cause is a schema rule it uses that rule's id (see\n")
	b.WriteString("[rules.md](rules.md)); the signals only a cluster shows have the ids below.\n\n")
	b.WriteString("    denorm doctor [--jmx URL|FILE ...] [--interval D] [--slowlog FILE|URL] [--log FILE] [--format text|json]\n\n")
	b.WriteString("| source | signal | rule |\n| --- | --- | --- |\n")
	for _, row := range [][3]string{
		{"/jmx Regions", "a region with 10x the median requests of its table's other regions", "region-hot"},
		{"/jmx Regions + region order", "the hot region is its table's last by start key", "key-monotonic"},
		{"/jmx Regions", "more than two stores per region", "family-count"},
		{"/jmx Regions", "a store at 75% of hbase.hstore.blockingStoreFiles (16)", "store-files-blocking"},
		{"/jmx Regions", "storeFileSize over hbase.hregion.max.filesize (10 GiB)", "region-size"},
		{"/jmx Regions", "90% or more of the rows read filtered away", "reads-filtered"},
		{"/jmx Server", "mutationsWithoutWALCount grows", "wal-skipped"},
		{"/jmx Server", "more than 1000 regions on a server", "region-size"},
		{"/jmx Server, IPC", "updatesBlockedTime, blockedRequestCount, exceptions.RegionTooBusyException grow", "memstore-blocking"},
		{"/jmx IPC", "exceptions.callQueueTooBig grows", "call-queue-full"},
		{"/jmx IPC", "exceptions.UnknownScannerException grows", "scanner-lease-expired"},
		{"slow log", "slow or oversized Scan calls", "scan-unbounded"},
		{"/jmx TableLatencies", "20 or more single-row puts and deletes a second on a table, ten times its batch calls", "puts-unbatched"},
		{"slow log", "10 or more slow single-row Mutate calls on a table", "puts-unbatched"},
		{"client log", "RowTooBigException", "row-unbounded"},
		{"client log", "KeyValue size too large, cell over the size limit", "cell-huge"},
		{"client log", "UnknownScannerException, ScannerTimeoutException, LeaseException", "scanner-lease-expired"},
		{"client log", "RegionTooBusyException, Blocking updates", "memstore-blocking"},
		{"client log", "CallQueueTooBigException", "call-queue-full"},
		{"client log", "too many store files", "store-files-blocking"},
		{"client log", "RetriesExhaustedWithDetailsException", "retries-exhausted"},
	} {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	b.WriteString("\nLive `/jmx` endpoints are sampled twice, `--interval` apart, because the counters are\n")
	b.WriteString("cumulative; a counter that drops between the samples began again (the region reopened) and\n")
	b.WriteString("counts from zero. Request counts reach `/jmx` with the region server's periodic snapshot\n")
	b.WriteString("(hbase.regionserver.metrics.period, 5 s by default), so use an interval of 10 s or more;\n")
	b.WriteString("store file counts and sizes are recomputed only every 45 s (seen on HBase 2.5.8: a region\n")
	b.WriteString("with 262 fresh store files still showed 0 until then). A saved `/jmx` file is read once and\n")
	b.WriteString("its counters are totals since each region opened. With `--store URL` the tables' regions are\n")
	b.WriteString("listed in start-key order, which `key-monotonic` needs (/jmx has no start keys), and each\n")
	b.WriteString("finding about a region says which rows it holds (`region ID holds rows [start, end)`; the\n")
	b.WriteString("JSON's `key_range`, \"\" without `--store`), since /jmx names regions only by encoded id.\n\n")
	b.WriteString("`--slowlog` takes a saved file (slow-log records as a JSON array or one per line, or region\n")
	b.WriteString("server log lines tagged `(responseTooSlow)`, `(responseTooLarge)` or\n")
	b.WriteString("`(responseTooLarge & TooSlow)`), or an `hbase://` gateway URL: then the slow-call and\n")
	b.WriteString("large-response ring buffers of every region server named in hbase:meta are read live\n")
	b.WriteString("through Thrift2's getSlowLogResponses. That needs HBase 2.4 or later with\n")
	b.WriteString("hbase.regionserver.slowlog.buffer.enabled; otherwise the buffers are simply empty. What\n")
	b.WriteString("counts as slow or large is the server's hbase.ipc.warn.response.time and\n")
	b.WriteString("hbase.ipc.warn.response.size (10 s and 100 MB by default).\n\n")
	b.WriteString("## Checked against a real HBase\n\n")
	b.WriteString("Every input format below was captured from the test environment's HBase 2.5.8 (and a Java\n")
	b.WriteString("hbase-client 2.5.8) and is kept in doctor/testdata; see its README for how.\n\n")
	b.WriteString("| input | signals produced there | how |\n| --- | --- | --- |\n")
	for _, row := range [][3]string{
		{"live /jmx", "region-hot, key-monotonic, family-count, wal-skipped, memstore-blocking, reads-filtered, puts-unbatched", "live tests"},
		{"saved /jmx", "the above, store-files-blocking (262 store files), scanner-lease-expired, call-queue-full", "captured beans"},
		{"slow log, live and saved", "scan-unbounded (a large Scan; slow Scans in the captures)", "live test, captures"},
		{"region server log lines", "(responseTooSlow), (responseTooLarge), RegionTooBusyException", "captured"},
		{"client log", "cell-huge, scanner-lease-expired, retries-exhausted, memstore-blocking, row-unbounded, call-queue-full", "captured"},
	} {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	b.WriteString("\nWhat real HBase wrote differently from its documentation: numbers above 32 bits are JSON\n")
	b.WriteString("strings in the log lines; Multi counts are `multi.gets` and `multi.mutations`; a Scan call\n")
	b.WriteString("that continues a scanner names its table only in `scandetails`; server names are\n")
	b.WriteString("`host,port,startcode`; a RowTooBigException names its region after `it belong to region =`.\n\n")
	b.WriteString("call-queue-full came from an instance started with a 1 MB hbase.ipc.server.max.callqueue.size,\n")
	b.WriteString("which a single 2 MB put exceeds (the queue-length variant, \"too many items queued\", was not\n")
	b.WriteString("produced). Still only from documented formats, because the test HBase cannot be driven there\n")
	b.WriteString("cheaply or reliably: region-size (10 GiB regions or a thousand regions), puts-unbatched from\n")
	b.WriteString("the slow log (ten single-row Mutate calls slower than the slow-call limit; its /jmx signal is\n")
	b.WriteString("tested live), ScannerTimeoutException and LeaseException (the 2.5 client reported an expired\n")
	b.WriteString("scanner as UnknownScannerException), the flusher's \"too many store files\" and 1.x's \"Blocking\n")
	b.WriteString("updates\" lines (neither appeared under the same pressure; 2.5 logs \"Region is too busy\" with\n")
	b.WriteString("the RegionTooBusyException), and the shell's get_slowlog_responses output (no shell here; the\n")
	b.WriteString("Thrift2 records carry the same fields).\n")
	b.WriteString("\n## Cluster-only rules\n")
	for _, r := range ClusterRules() {
		fmt.Fprintf(&b, "\n### %s\n\n", r.ID)
		fmt.Fprintf(&b, "%s. Severity: **%s**.\n\n", r.Title, r.Severity)
		fmt.Fprintf(&b, "**Symptom.** %s\n\n", r.Symptom)
		fmt.Fprintf(&b, "**Cause.** %s\n\n", r.Cause)
		fmt.Fprintf(&b, "**Fix.** %s\n", r.Fix)
	}
	return b.String()
}
