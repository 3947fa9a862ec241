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
	b.WriteString("    denorm doctor [--jmx URL|FILE ...] [--interval D] [--slowlog FILE] [--log FILE] [--format text|json]\n\n")
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
	b.WriteString("counts from zero. Region metrics reach `/jmx` with the region server's periodic snapshot\n")
	b.WriteString("(hbase.regionserver.metrics.period, 5 s by default), so use an interval of 10 s or more. A\n")
	b.WriteString("saved `/jmx` file is read once and its counters are totals since each region opened.\n\n")
	b.WriteString("Not done yet: the command does not fetch region start keys itself, so `key-monotonic` comes\n")
	b.WriteString("only from the library (doctor.Input.RegionOrder, filled from a store's Regions).\n")
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
