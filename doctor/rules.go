package doctor

import "github.com/denorm/denorm/review"

// Rule is a cluster-only catalogue entry: a signal the doctor reads from a
// running cluster that no schema rule covers. The review package owns the
// schema rules; a doctor finding whose cause is one of them uses its id.
type Rule struct {
	ID       string
	Severity review.Severity
	Title    string
	Symptom  string
	Cause    string
	Fix      string
}

// ClusterRules returns the cluster-only rules, sorted by id; a fresh slice
// on each call. The ids are a contract like the review's: never rename one.
func ClusterRules() []Rule {
	return []Rule{
		{ID: "call-queue-full", Severity: review.SeverityError,
			Title:   "RPC call queue full",
			Symptom: "Clients get CallQueueTooBigException; the server's IPC bean counts exceptions.callQueueTooBig.",
			Cause:   "More requests reach a region server than its handlers can serve, usually because of a hot region or a burst of unbatched calls.",
			Fix:     "Spread the load (see region-hot and key-monotonic), batch small calls, and only then consider more handlers or a larger queue."},
		{ID: "memstore-blocking", Severity: review.SeverityError,
			Title:   "Writes blocked on a full memstore",
			Symptom: "RegionTooBusyException ('Over memstore limit') in clients, 'Blocking updates' in server logs, updatesBlockedTime or blockedRequestCount growing.",
			Cause:   "A region's memstore reached flush.size x block.multiplier faster than it could flush, typically a write hot spot or flushes waiting on a compaction backlog.",
			Fix:     "Remove the hot spot (spread the keys, pre-split); if writes are spread already, give flushes room: fewer families, faster disks, larger flush size with heap to match."},
		{ID: "reads-filtered", Severity: review.SeverityWarning,
			Title:   "Most rows read are filtered away",
			Symptom: "A region's filteredReadRequestCount dwarfs its readRequestCount.",
			Cause:   "Queries scan ranges and drop most rows with filters, which is what a key that does not serve the query forces.",
			Fix:     "Give the query a table whose row key starts with the filtered fields (see key-read-mismatch)."},
		{ID: "region-hot", Severity: review.SeverityError,
			Title:   "One region takes far more requests than its table's others",
			Symptom: "A region's request rate is ten or more times the median of its table's regions.",
			Cause:   "Keys concentrate on one key range: a monotonic key, a low-cardinality prefix or a single hot row.",
			Fix:     "Lead the key with a salt or hash of the entity id and pre-split on it; for a hot row, spread it over buckets."},
		{ID: "retries-exhausted", Severity: review.SeverityError,
			Title:   "Client gave up after all retries",
			Symptom: "RetriesExhaustedWithDetailsException in client logs, naming failed actions and the servers with issues.",
			Cause:   "A server stayed overloaded or unreachable for the whole retry budget; the quoted cause names the underlying problem.",
			Fix:     "Fix the cause the exception quotes (often a hot region or a blocked memstore); set operation timeouts the caller can live with."},
		{ID: "scanner-lease-expired", Severity: review.SeverityWarning,
			Title:   "Scanners expire between calls",
			Symptom: "UnknownScannerException, ScannerTimeoutException or LeaseException in client logs; exceptions.UnknownScannerException on the server.",
			Cause:   "The client took longer than hbase.client.scanner.timeout.period (60 s) between next() calls, usually because it processes a large caching batch slowly or scans far too much.",
			Fix:     "Bound the scan (see scan-unbounded), lower scanner caching so each batch is processed quickly, or move the work to a batch job over a snapshot."},
		{ID: "store-files-blocking", Severity: review.SeverityWarning,
			Title:   "Store files near the blocking limit",
			Symptom: "A store holds close to hbase.hstore.blockingStoreFiles (16) files; flushes are delayed ('too many store files') and writes stall.",
			Cause:   "Flushes outpace compactions: too many families, undersized flushes or a compaction backlog.",
			Fix:     "Cut the families (see family-count), raise the flush size, and give compactions more threads or an off-peak window."},
	}
}

// ruleFor finds a rule's default severity and fix in either catalogue.
func ruleFor(id string) (review.Severity, string, string) {
	if r, ok := review.Lookup(id); ok {
		return r.Severity, r.Title, r.Fix
	}
	for _, r := range ClusterRules() {
		if r.ID == id {
			return r.Severity, r.Title, r.Fix
		}
	}
	return review.SeverityWarning, id, ""
}
