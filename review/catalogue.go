package review

import "sort"

// Severity ranks a finding. Error findings make `denorm review` exit 1.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Rule is one entry of the anti-pattern catalogue. The ids are a contract
// shared with doctor and with users' suppression lists: never rename one.
type Rule struct {
	ID       string
	Severity Severity // the default; a finding may be stricter (see cell-huge)
	Title    string
	Symptom  string
	Cause    string
	Fix      string
	// Reads says which parts of the schema the rule looks at, and so where
	// its findings point.
	Reads string
	// Example is a complete schema that triggers the rule; docs/rules.md
	// shows it and a test checks that it still triggers.
	Example string
}

// Catalogue returns every rule, sorted by id. It builds a fresh slice on
// each call so callers may change what they get without touching anyone else.
func Catalogue() []Rule {
	rules := []Rule{
		{
			ID: "key-monotonic", Severity: SeverityError,
			Title:   "Row key led by a time or a sequence",
			Symptom: "Write latency and CPU peak on one region server while the others have little to do; splitting the hot region only hands the heat to the half holding the newest keys.",
			Cause:   "A timestamp or an increasing id as the first key part sends every new row to the end of the key space, which one region owns.",
			Fix:     "Lead the key with something spread out: salt(id, n), a hash of an entity id, or the entity id itself; put time after it (reverse(ts) for newest first). Time-range reads then fan out over the buckets.",
			Reads:   "the first part of each table's rowkey, with the field's type (timestamp), the entity's version field when its version_kind is epoch_ms, and workload.keys (distribution: sequential). A day(...) first part is a warning; a salt or hash first part is never flagged.",
		},
		{
			ID: "key-read-mismatch", Severity: SeverityError,
			Title:   "Query not served by any row key prefix",
			Symptom: "A frequent query has to read the whole table (or a whole time window) and throw most rows away, and it slows down as data grows.",
			Cause:   "HBase indexes only the row key. A query whose fields are not a prefix of some table's key must read every row.",
			Fix:     "Add (or point the query at) a table whose row key starts with the query's fields, e.g. an index table, and keep it written by the writer.",
			Reads:   "each query's by and range against its table's rowkey. Error when no by field is in the key prefix (a full or time-window scan that filters); warning when some by fields are filtered after the prefix. A query declared scan: full without rate or latency is batch work and is left alone.",
		},
		{
			ID: "counter-hot-row", Severity: SeverityWarning,
			Title:   "Counter row without buckets at a high write rate",
			Symptom: "Increment latency climbs and calls time out on a few rows while most servers have headroom.",
			Cause:   "An increment reads, adds and writes under the row lock; all increments of one row run one after another on one server.",
			Fix:     "Spread the counter over buckets (buckets: N adds a bucket prefix) and sum the buckets when reading, or pre-aggregate in the writer.",
			Reads:   "counter tables: rowkey, buckets, the table's increments per second (workload.writes_per_second times the rows one event writes: the when share and, with each, the typical child count) and workload.keys distributions of the key fields. Fires when the busiest row is estimated above 200 increments/s.",
		},
		{
			ID: "index-hot-prefix", Severity: SeverityWarning,
			Title:   "Index key led by a low-cardinality field",
			Symptom: "All writes for one value (status OPEN, flag true) land on a single region of the index table.",
			Cause:   "A field with a handful of values as the first key part gives the index only a handful of distinct key ranges to write to.",
			Fix:     "Put salt(id, n) before the low-cardinality field and read all n buckets, merging the results.",
			Reads:   "the first rowkey part of non-counter tables: bool fields, workload.keys with 64 or fewer values, or (with no distribution declared) names such as status, state, type or kind.",
		},
		{
			ID: "family-count", Severity: SeverityWarning,
			Title:   "More column families than the access patterns need",
			Symptom: "Lots of tiny HFiles per region, flushes that fire often, and compactions that never seem to catch up.",
			Cause:   "HBase keeps a store per family in each region: each one brings a memstore to account for and its own files to flush and compact.",
			Fix:     "Use one or two families. Split only where families are read separately or need different settings (TTL, versions, compression).",
			Reads:   "tables with more than two families, comparing versions, ttl, compression, encoding, blocksize, bloom and in_memory.",
		},
		{
			ID: "row-unbounded", Severity: SeverityError,
			Title:   "Unbounded or very large child list embedded in a row",
			Symptom: "Reads fail with RowTooBigException, region servers run short of heap, and a region stays oversized because one giant row cannot be divided.",
			Cause:   "Regions split between rows, never inside one, and reading a row builds all of it in memory; a child list with a huge bound lets one row grow past what a region or a read can handle.",
			Fix:     "Declare a small max for embedded children, or move them to a tall table keyed parent|child (for events, with time in the key).",
			Reads:   "template columns (\"f:{key}\") that embed a child list in one row: the child's max and the estimated cell size. Warning over 10,000 elements or 10 MiB per row; error at 100,000 elements or 100 MiB.",
		},
		{
			ID: "cell-huge", Severity: SeverityWarning,
			Title:   "Cell values near or over the cell size limit",
			Symptom: "Writes are rejected with 'KeyValue size too large'; below the limit, big values make each flush and compaction slow because they are copied every time.",
			Cause:   "The client and server refuse cells over 10 MiB (hbase.client.keyvalue.maxsize); under it, large values crowd the block cache and are copied again by each compaction.",
			Fix:     "Keep objects of more than a few MiB in an object store with a pointer in HBase; consider MOB for values between about 100 KiB and 10 MiB. A declared size over the limit is an error.",
			Reads:   "the declared size of the fields each column holds (size:, a typical size; the schema has no maximum). Warning from 1 MiB; error over the 10 MiB cell limit.",
		},
		{
			ID: "versions-as-history", Severity: SeverityWarning,
			Title:   "Cell versions used as a history",
			Symptom: "Older values that users relied on are gone after a major compaction.",
			Cause:   "A family keeps only its VERSIONS newest versions (1 by default in HBase 2); compactions drop the rest, and TTL or deletes remove more.",
			Fix:     "Keep history as data: time in the row key (a tall table) or in the qualifier, with versions: 1.",
			Reads:   "families with versions above 1.",
		},
		{
			ID: "names-long", Severity: SeverityInfo,
			Title:   "Long family or qualifier names",
			Symptom: "The table is several times larger on disk than the values it holds.",
			Cause:   "Every cell repeats its family and qualifier names, so each name byte is paid once per cell.",
			Fix:     "Use one- or two-byte family and qualifier names and map them to readable names in the schema; turn on FAST_DIFF encoding and compression.",
			Reads:   "family names over 2 bytes and qualifiers over 4 bytes (fixed text of templates); the message gives the name bytes per record.",
		},
		{
			ID: "scan-unbounded", Severity: SeverityWarning,
			Title:   "Online scan without a limit",
			Symptom: "Scanners expire mid-read (the lease is 60 s by default), the block cache loses its useful data, and other users' requests slow down.",
			Cause:   "A scan with no row limit reads to the end of its range; server-side filters do not save the reads.",
			Fix:     "Give every online query a limit (and page with a start row); send full-table work to a batch job over a snapshot.",
			Reads:   "queries that are not single-row gets and fix only part of the key, without a limit. A last: time window on the key makes it an info note.",
		},
		{
			ID: "client-side-join", Severity: SeverityWarning,
			Title:   "Query that needs a follow-up read per result",
			Symptom: "A page makes one Get per result row, and latency grows with the page size.",
			Cause:   "A thin index holds only primary keys, so every hit costs another read of the primary table; HBase cannot join.",
			Fix:     "Make the index covering for the fields the query shows (covering: [...]), or relax the latency target.",
			Reads:   "queries on thin indexes (covering: []) with a latency target of 50 ms or less or a rate of 100/s or more.",
		},
		{
			ID: "table-as-queue", Severity: SeverityError,
			Title:   "Table used as a queue",
			Symptom: "Taking the next item costs more with every hour the queue runs.",
			Cause:   "Deleting a consumed item writes a delete marker, and markers stay until a major compaction; a consumer looking for the oldest live item must read past all of them first.",
			Fix:     "Use a log such as Kafka. If it must stay in HBase, write time-bucketed rows and let TTL drop whole buckets instead of deleting items.",
			Reads:   "table names containing queue, outbox or inbox, and queries that take the first rows of a table led by an ascending time or sequence with no by and no range. The schema has no field for a consume-and-delete pattern.",
		},
		{
			ID: "connection-per-request", Severity: SeverityError,
			Title:   "A new connection for every request",
			Symptom: "Latency dominated by setup; a steady stream of new ZooKeeper sessions and meta lookups that follows the request rate.",
			Cause:   "Setting up a connection means a registry session, an empty cache of region locations to refill from hbase:meta, and new thread pools; a connection per request pays all of that every time.",
			Fix:     "Create one connection per process and share it; take a cheap table handle per unit of work.",
			Reads:   "client.connection: per_request.",
		},
		{
			ID: "puts-unbatched", Severity: SeverityWarning,
			Title:   "Writes sent one at a time",
			Symptom: "Ingest throughput capped by round trips while servers are idle.",
			Cause:   "Each single put is its own RPC.",
			Fix:     "Write through a buffered mutator (client write_buffer, e.g. 2-4 MiB) that groups mutations by region server; avoid giant batches that time out whole.",
			Reads:   "client.batching: single; no batching and no write_buffer at 1,000 writes/s or more; client.batch_size over 10,000.",
		},
		{
			ID: "client-no-timeouts", Severity: SeverityWarning,
			Title:   "Client without explicit timeouts",
			Symptom: "During a region move or a server failure, user-facing calls stall far beyond their budget instead of failing fast.",
			Cause:   "The default retry schedule (15 retries with back-off) suits batch jobs, not requests with a budget of seconds.",
			Fix:     "Set rpc_timeout and operation_timeout for each workload, below the caller's own deadline.",
			Reads:   "client.rpc_timeout and client.operation_timeout.",
		},
		{
			ID: "presplit-missing", Severity: SeverityWarning,
			Title:   "High write rate into a table that starts with one region",
			Symptom: "A new table's load lands on one server, and throughput improves only as automatic splits slowly spread it.",
			Cause:   "A new table has a single region; splitting only starts once it grows.",
			Fix:     "Pre-split from the expected key distribution: one region per salt bucket, or ops.presplit: N over a hash prefix.",
			Reads:   "tables whose key does not start with a salt: no presplit at 1,000 row writes/s or more (workload.writes_per_second times the rows one event writes in the table); or presplit asked for a key that starts with neither salt nor hash (a warning when the table asks, a note when it inherits ops.presplit).",
		},
		{
			ID: "major-compaction-periodic", Severity: SeverityWarning,
			Title:   "Time-based major compaction without an off-peak window",
			Symptom: "Every few days disk and network saturate during business hours and latency climbs.",
			Cause:   "By default HBase major-compacts every 7 days (with jitter) at whatever hour that falls, rewriting whole tables next to user traffic.",
			Fix:     "Set major_compaction: manual and run compactions from a scheduler off-peak, or declare an off-peak window.",
			Reads:   "ops.major_compaction and ops.offpeak. Not declared at all is an info note, since HBase's default is periodic.",
		},
		{
			ID: "wal-skipped", Severity: SeverityError,
			Title:   "Write-ahead log skipped for data that cannot be rebuilt",
			Symptom: "Acknowledged writes vanish after a region server crash.",
			Cause:   "With SKIP_WAL nothing is logged; whatever sat in the memstore is gone when the server dies.",
			Fix:     "Use sync_wal (or async_wal for a small loss window); skip the log only for data declared regenerable.",
			Reads:   "each table's durability (its own, else ops.durability) and regenerable. async_wal is an info note.",
		},
		{
			ID: "region-size", Severity: SeverityWarning,
			Title:   "Regions far too small or far too large",
			Symptom: "Tiny regions: many memstores fighting for heap and constant small flushes. Giant regions: slow splits, moves and recovery.",
			Cause:   "The maximum region size (hbase.hregion.max.filesize, 10 GiB by default) or the pre-split count is far from what the data volume needs.",
			Fix:     "Keep regions roughly between 1 and 20 GiB: adjust max region size or the number of pre-split regions to the expected table size.",
			Reads:   "ops.region_max_filesize (below 1 GiB or above 50 GiB), and pre-split regions that would hold under 64 MiB each given workload.entities (an info note).",
		},
		{
			ID: "counter-not-idempotent", Severity: SeverityWarning,
			Title:   "Counter updated in a way that a retry double-counts",
			Symptom: "Counters drift above the truth after retries or replays.",
			Cause:   "Increment is not idempotent: a replayed event adds again unless its id was recorded.",
			Fix:     "Use mode: exact (deduplicate by event id), or keep fast mode and schedule reconcile to recompute the counter.",
			Reads:   "counter tables' mode: fast, or not declared. The schema cannot say whether reconcile is scheduled.",
		},
		{
			ID: "copy-intent-missing", Severity: SeverityWarning,
			Title:   "Copied reference field without a snapshot or live intent",
			Symptom: "A copy shows today's value where the value at the time was meant, or the reverse.",
			Cause:   "A field copied from another entity is either a snapshot (never refreshed) or a live view (refreshed on change); undeclared, nobody knows which.",
			Fix:     "Declare intent: snapshot or intent: live for each copied field; live copies are refreshed from the reference entity's events.",
			Reads:   "each copied field of entities' references: intent snapshot or live.",
		},
		{
			ID: "ttl-with-version-timestamps", Severity: SeverityError,
			Title:   "TTL on a family whose cell timestamps are event versions",
			Symptom: "Cells expire at once, or never, whatever the TTL says.",
			Cause:   "TTL is measured against the cell timestamp in milliseconds; denorm stamps cells with event versions, which are not wall-clock times unless declared so.",
			Fix:     "Drop the TTL and expire data by key range, or make the entity's version a millisecond timestamp and declare version_kind: epoch_ms.",
			Reads:   "families with a ttl in non-counter tables of entities whose version_kind is event (or not epoch_ms).",
		},
	}
	for i := range rules {
		rules[i].Example = exampleFor(rules[i].ID)
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	return rules
}

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	for _, r := range Catalogue() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
