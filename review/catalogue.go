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
	// Levels lists, for a rule that can fire at more than one severity,
	// when each applies (see severityRule). A finding's severity is always
	// one of these, or the default for a rule without levels; a test holds
	// the code to it.
	Levels []Level
}

// Level is one severity a rule can fire at and the condition for it.
type Level struct {
	Severity Severity
	When     string
}

// Allows reports whether a finding of this rule may carry the severity.
func (r Rule) Allows(s Severity) bool {
	if len(r.Levels) == 0 {
		return s == r.Severity
	}
	for _, l := range r.Levels {
		if l.Severity == s {
			return true
		}
	}
	return false
}

// severityRule is the one rule every multi-level rule follows; docs/rules.md
// prints it above the catalogue.
const severityRule = `Every rule has a default severity: the one for the case its title
describes, with the evidence declared in the schema. A finding moves from it
only for these reasons, and each rule's section lists the levels it uses:

- **Measured**: when a rule can count the harm from the schema and workload
  (rows read per call, cell and row sizes, regions per table), the count
  decides, on the same ladder for every rule that reads rows:
  under 10,000 rows per call is info, 10,000 to a million a warning, a
  million or more an error. A cell or row over HBase's hard limit is an error.
- **Guessed**: when the evidence is a guess (a field's name, an integer id
  whose distribution workload.keys does not give), one step milder.
- **Bounded or default**: when something declared bounds the harm (a day
  prefix instead of a clock, async_wal instead of skip_wal, a few idle
  regions), or the finding is about HBase's default rather than a
  declaration, one step milder.

Without the workload's numbers a measured rule falls back on its default.`

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
			Reads:   "the first part of each table's rowkey, with the field's type (timestamp), the entity's version field when its version_kind is epoch_ms, and workload.keys (distribution: sequential). A day(...) first part is a warning; a salt, hash or bitrev first part is never flagged; text(...) and pad(...) parts are read as their field.",
			Levels: []Level{
				{Severity: SeverityError, When: "the first part is a timestamp, a declared sequential field or a clock version"},
				{Severity: SeverityWarning, When: "bounded: the first part is day(...), so writes of a day share one key range that splits; or guessed: an integer entity id whose distribution is not declared"},
			},
		},
		{
			ID: "key-read-mismatch", Severity: SeverityError,
			Title:   "Query not served by any row key prefix",
			Symptom: "A frequent query has to read the whole table (or a whole time window) and throw most rows away, and it slows down as data grows.",
			Cause:   "HBase indexes only the row key. A query whose fields are not a prefix of some table's key must read every row.",
			Fix:     "Add (or point the query at) a table whose row key starts with the query's fields, e.g. an index table, and keep it written by the writer.",
			Reads:   "each query's by, where, range (last, calendar or from/to) and limit against its table's rowkey, and the rows one call reads: the rows written in its time window (workload.writes_per_second and the table's rows per event) or the table's stored rows (workload.entities, or the write rate over the TTL), divided by the workload.keys cardinality of each fixed part; a where predicate keeps its weighted share. A where on a partial table's own when field filters nothing. A query declared scan: full without rate or latency is batch work and is left alone.",
			Levels: []Level{
				{Severity: SeverityError, When: "a million rows or more read per call; without the workload's numbers, a query that fixes none of the fields the caller gives (a full scan, or a time window over everyone)"},
				{Severity: SeverityWarning, When: "10,000 to a million rows read per call; without the numbers, a filter after a useful key prefix"},
				{Severity: SeverityInfo, When: "under 10,000 rows read per call"},
			},
		},
		{
			ID: "counter-hot-row", Severity: SeverityWarning,
			Title:   "Counter row without buckets at a high write rate",
			Symptom: "Increment latency climbs and calls time out on a few rows while most servers have headroom.",
			Cause:   "An increment reads, adds and writes under the row lock; all increments of one row run one after another on one server.",
			Fix:     "Spread the counter over buckets (buckets: N adds a bucket prefix) and sum the buckets when reading, or pre-aggregate in the writer.",
			Reads:   "counter tables: rowkey, buckets, the table's increments per second (the entity's rate from workload.writes_by_entity, else workload.writes_per_second, times the rows one event writes: the when share and, with each, the typical child count) and workload.keys distributions of the key fields; a salt or hash spreads no further than the values of the fields it reads. Fires when the busiest row is estimated above 200 increments/s.",
		},
		{
			ID: "index-hot-prefix", Severity: SeverityWarning,
			Title:   "Index key led by a low-cardinality field",
			Symptom: "All writes for one value (status OPEN, flag true) land on a single region of the index table.",
			Cause:   "A field with a handful of values as the first key part gives the index only a handful of distinct key ranges to write to.",
			Fix:     "Put salt(id, n) before the low-cardinality field and read all n buckets, merging the results.",
			Reads:   "the first rowkey part of non-counter tables: bool fields, workload.keys with 64 or fewer values, or (with no distribution declared) names such as status, state, type or kind. A leading salt(f, n) or hash(f, n) is checked through to f: when f has fewer values than the salt has buckets (or the hash has values), the key has only as many leading values as f; a hash of several fields has the product of their values. text(...) and pad(...) parts are read as their field.",
			Levels: []Level{
				{Severity: SeverityWarning, When: "workload.keys or the field's type (bool) gives the few values, of the first part or of the field a leading salt or hash reads"},
				{Severity: SeverityInfo, When: "guessed: only the field's name suggests few values"},
			},
		},
		{
			ID: "family-count", Severity: SeverityWarning,
			Title:   "More column families than the access patterns need",
			Symptom: "Lots of tiny HFiles per region, flushes that fire often, and compactions that never seem to catch up.",
			Cause:   "HBase keeps a store per family in each region: each one brings a memstore to account for and its own files to flush and compact.",
			Fix:     "Use one or two families. Split only where families are read separately or need different settings (TTL, versions, compression).",
			Reads:   "tables with more than two families, comparing versions, ttl, compression, encoding, blocksize, bloom, in_memory, min_versions, keep_deleted_cells, mob and mob_threshold, blockcache and compaction.",
		},
		{
			ID: "row-unbounded", Severity: SeverityError,
			Title:   "Unbounded or very large child list embedded in a row, or a counter row that grows with the traffic",
			Symptom: "Reads fail with RowTooBigException, region servers run short of heap, and a region stays oversized because one giant row cannot be divided.",
			Cause:   "Regions split between rows, never inside one, and reading a row builds all of it in memory; a child list with a huge bound, or an exact-mode counter's one contribution cell per entity, lets one row grow past what a region or a read can handle.",
			Fix:     "Declare a small max for embedded children, or move them to a tall table keyed parent|child (for events, with time in the key). For a counter, use mode: bounded (one total per add and one sequence per log stream, exact as well) or keep exact mode for counters few entities add to.",
			Reads:   "template columns (\"f:{key}\") that embed a child list in one row: the child's max, the estimated cell size and the table's max_row_size. Exact-mode counter tables: the busiest row's contribution cells per day when the key has a day() part (the entity's event rate, each event taken as a new entity, times the rows one event counts in: the when share and, with each, the typical child count; times the busiest key's share from workload.keys; over buckets), else over the stored entities, and their KeyValue bytes. Warning over 10,000 elements or cells, or 10 MiB per row; error at 100,000, 100 MiB, or more than max_row_size.",
			Levels: []Level{
				{Severity: SeverityError, When: "measured: 100,000 elements or counter cells or more, rows of 100 MiB or more, or rows larger than the table's max_row_size"},
				{Severity: SeverityWarning, When: "measured: over 10,000 elements or counter cells, or rows of 10 MiB or more"},
			},
		},
		{
			ID: "cell-huge", Severity: SeverityWarning,
			Title:   "Cell values near or over the cell size limit",
			Symptom: "Writes are rejected with 'KeyValue size too large'; below the limit, big values make each flush and compaction slow because they are copied every time.",
			Cause:   "The client and server refuse cells over 10 MiB (hbase.client.keyvalue.maxsize); under it, large values crowd the block cache and are copied again by each compaction.",
			Fix:     "Keep objects of more than a few MiB in an object store with a pointer in HBase; consider MOB for values between about 100 KiB and 10 MiB. A declared size over the limit is an error.",
			Reads:   "the declared sizes of the fields each column holds: size: (typical) and max_size: (largest), and the family's mob and mob_threshold. Warning from 1 MiB in a family without MOB (or with a threshold above the cell); error over the 10 MiB cell limit.",
			Levels: []Level{
				{Severity: SeverityError, When: "measured: a typical or maximum cell size over the 10 MiB cell limit"},
				{Severity: SeverityWarning, When: "measured: cells of 1 MiB or more, typical or maximum, in a family that does not store them as MOB"},
			},
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
			Reads:   "queries that are not single-row gets and fix only part of the key, without a limit, and the rows one call then reads (worked out as for key-read-mismatch).",
			Levels: []Level{
				{Severity: SeverityError, When: "a million rows or more read per call"},
				{Severity: SeverityWarning, When: "10,000 to a million rows read per call; without the numbers, the default"},
				{Severity: SeverityInfo, When: "under 10,000 rows read per call; without the numbers, a time window on the key bounds the read"},
			},
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
			Reads:   "table names containing queue, outbox or inbox, and queries that take the first rows (limit, forward direction: the oldest) of a table led by an ascending time or sequence with no by, range or multi_get. A query with direction: reverse takes the newest rows and is not a consumer.",
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
			Levels: []Level{
				{Severity: SeverityWarning, When: "a high write rate into one region, or a table that asks for presplit its key cannot give split points for"},
				{Severity: SeverityInfo, When: "default: the presplit is inherited from ops.presplit"},
			},
		},
		{
			ID: "major-compaction-periodic", Severity: SeverityWarning,
			Title:   "Time-based major compaction without an off-peak window",
			Symptom: "Every few days disk and network saturate during business hours and latency climbs.",
			Cause:   "By default HBase major-compacts every 7 days (with jitter) at whatever hour that falls, rewriting whole tables next to user traffic.",
			Fix:     "Set major_compaction: manual and run compactions from a scheduler off-peak, or declare an off-peak window.",
			Reads:   "ops.major_compaction and ops.offpeak. Not declared at all is an info note, since HBase's default is periodic.",
			Levels: []Level{
				{Severity: SeverityWarning, When: "ops.major_compaction: periodic without an off-peak window"},
				{Severity: SeverityInfo, When: "default: not declared, so HBase's 7-day default applies"},
			},
		},
		{
			ID: "wal-skipped", Severity: SeverityError,
			Title:   "Write-ahead log skipped for data that cannot be rebuilt",
			Symptom: "Acknowledged writes vanish after a region server crash.",
			Cause:   "With SKIP_WAL nothing is logged; whatever sat in the memstore is gone when the server dies.",
			Fix:     "Use sync_wal (or async_wal for a small loss window); skip the log only for data declared regenerable.",
			Reads:   "each table's durability (its own, else ops.durability) and regenerable. async_wal is an info note.",
			Levels: []Level{
				{Severity: SeverityError, When: "skip_wal on data not declared regenerable"},
				{Severity: SeverityInfo, When: "bounded: async_wal"},
			},
		},
		{
			ID: "region-size", Severity: SeverityWarning,
			Title:   "Regions far too small or far too large",
			Symptom: "Tiny regions: many memstores fighting for heap and constant small flushes. Giant regions: slow splits, moves and recovery.",
			Cause:   "The maximum region size (hbase.hregion.max.filesize, 10 GiB by default) or the pre-split count is far from what the data volume needs.",
			Fix:     "Keep regions roughly between 1 and 20 GiB: adjust max region size or the number of pre-split regions to the expected table size.",
			Reads:   "ops.region_max_filesize (below 1 GiB or above 50 GiB), and the regions a table is created with (one per bucket of a leading salt, else presplit, times region_replicas) against its size from workload.entities and the cost model's bytes per record: regions that would hold under 64 MiB each; with split_policy: disabled, regions that would grow past 50 GiB.",
			Levels: []Level{
				{Severity: SeverityWarning, When: "ops.region_max_filesize below 1 GiB or above 50 GiB; 32 or more regions at creation (replicas counted) holding under 64 MiB each; or, with split_policy disabled, regions that grow past 50 GiB"},
				{Severity: SeverityInfo, When: "bounded: fewer than 32 such regions; or, reviewing a live table, a sample that leaves most of its regions empty"},
			},
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
			ID: "fanout-amplification", Severity: SeverityWarning,
			Title:   "Fan-out on write multiplies every event into many rows",
			Symptom: "Write throughput and region-server CPU follow the size of the biggest lists rather than the event rate; one popular author's post stalls the writer for minutes.",
			Cause:   "A copy of each entity into every element of another entity's list (a post into each follower's timeline) turns one event into as many row writes as the list is long, and the longest lists are the ones written most.",
			Fix:     "Fan out on write only for lists up to a few thousand elements; for longer ones, store the entity once and merge the followed authors' rows when reading. Write copies for active elements only, and spread the copies with a salt or hash of the element key.",
			Reads:   "fanout tables: the entity's events per second (workload.writes_by_entity, else writes_per_second) times the typical length of the list the copies go to, and the list's max (the rows one event can write). Denorm's writer does not write fanout tables: they are declared so that review and cost can price them.",
			Levels: []Level{
				{Severity: SeverityError, When: "measured: 100,000 row writes/s or more through the fan-out, or one event that can write 1,000,000 rows or more"},
				{Severity: SeverityWarning, When: "measured: 10,000 row writes/s or more, or one event that can write 100,000 rows or more"},
			},
		},
		{
			ID: "key-fields-mutable", Severity: SeverityWarning,
			Title:   "Primary row key built from fields that can change, with no locator",
			Symptom: "An entity whose date or owner is corrected shows up twice: the old row and its copies stay, and which of the two a reader finds depends on the order its events arrived in.",
			Cause:   "The primary row key holds fields beyond the entity key; an event that changes one of them names another row, and nothing maps the entity key to the row the entity lived in, so the old one is never emptied.",
			Fix:     "Declare a table with role: locator for the entity (row key: the entity key, hashed if ids are sequential): the writer then moves the entity, deletes its old row and copies, and needs no hints for deletes. Or key the primary table by the entity key alone.",
			Reads:   "each entity's primary table rowkey against the entity's key fields, and whether the schema has a locator table for the entity.",
		},
		{
			ID: "ttl-copy-outlives-primary", Severity: SeverityWarning,
			Title:   "Index or lookup rows kept longer than the primary rows they copy",
			Symptom: "A covering index keeps answering with entities that have expired; a thin index's hits point at nothing and are dropped at every read; reconcile reports the rows as orphans run after run.",
			Cause:   "The primary table's TTL expires an entity, but its copies sit in tables that keep cells longer or forever. Nothing writes when a cell expires, so the writer never deletes the copies.",
			Fix:     "Give the index and lookup tables the primary table's TTL, or a shorter one. Or drop the TTL from the primary table and send delete events for old entities.",
			Reads:   "the shortest TTL among the primary table's families that drop every version (no min_versions) against every family of the entity's index and lookup tables: one without a TTL, with a longer one, or with min_versions keeps copies longer. Counter tables are left out: totals often outlive what they count on purpose, and reconcile's --since leaves the older days of a counter keyed by day() alone (a bounded counter has a rule of its own, ttl-bounded-counter).",
		},
		{
			ID: "ttl-bounded-counter", Severity: SeverityWarning,
			Title:   "Bounded counter of an entity whose primary rows expire",
			Symptom: "A total counts an entity twice once the entity has expired and is written again; reconcile then reports the total drifted and recounts it from the entities still alive.",
			Cause:   "Mode bounded keeps, in the entity's primary row, what the totals hold of the entity. The TTL expires that record with the row while the totals keep the entity's count, so the entity's next event looks like a new entity's and its count is added again. Mode exact keeps a contribution cell per entity, which the entity's next event overwrites where the entity still counts in the same row.",
			Fix:     "Use mode exact (with the primary table's TTL on the counter table when the totals should count only entities still alive), or drop the TTL from the primary table and send delete events for old entities.",
			Reads:   "the shortest TTL among the primary table's families that drop every version (no min_versions), for every counter table of the entity in mode bounded.",
		},
		{
			ID: "ttl-with-version-timestamps", Severity: SeverityError,
			Title:   "TTL on a family whose cell timestamps are event versions",
			Symptom: "Cells expire at once, or never, whatever the TTL says.",
			Cause:   "TTL is measured against the cell timestamp in milliseconds; denorm stamps cells with event versions, which are not wall-clock times unless declared so.",
			Fix:     "Drop the TTL and expire data by key range, or make the entity's version a millisecond timestamp and declare version_kind: epoch_ms.",
			Reads:   "families with a ttl in non-counter tables of entities whose version_kind is event (or not epoch_ms); and the cells other entities' versions stamp: in a primary table's first family the live copies of each referenced entity, in a lookup table its reference's rows, when that entity's version_kind is not epoch_ms.",
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
