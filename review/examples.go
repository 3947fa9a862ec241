package review

import "strings"

// exampleFor returns a complete schema that triggers the rule id. Each is
// the clean schema of cleanExample with one section changed, so the
// example shows the mistake and nothing else.
func exampleFor(id string) string {
	s, ok := exampleSections()[id]
	if !ok {
		return ""
	}
	return s.render()
}

// sections is a schema split into the parts the examples vary. An empty
// part takes the clean default.
type sections struct {
	entities, tables, queries, workload, client, ops string
}

const (
	cleanEntities = `entities:
  order:
    key: orderId
    version: version
    version_kind: event
    fields:
      orderId: {type: string, size: 12}
      customerId: {type: string, size: 10}
      status: {type: string, size: 7}
      placedAt: timestamp
`
	cleanTables = orderTables + cleanLocator
	// orderTables keys orders under their customer and date; without a
	// locator an order whose date changes would live twice.
	orderTables = `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {compression: SNAPPY, encoding: FAST_DIFF}
    columns:
      d:s: status
`
	cleanLocator = `  order_locations:
    role: locator
    entity: order
    rowkey: ["hash(orderId, 2)", orderId]
    presplit: 4
    families:
      l: {compression: SNAPPY}
`
	cleanQueries = `queries:
  recent_orders:
    table: orders
    by: [customerId]
    limit: 50
    rate: 200/s
    latency: 20ms
`
	cleanClient = `client:
  rpc_timeout: 2s
  operation_timeout: 10s
  write_buffer: 4MiB
  connection: per_process
  batching: buffered
`
	cleanOps = `ops:
  major_compaction: manual
  durability: sync_wal
`
)

func (s sections) render() string {
	pick := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	parts := []string{
		"name: example\n",
		pick(s.entities, cleanEntities),
		pick(s.tables, cleanTables),
		pick(s.queries, cleanQueries),
	}
	if s.workload != "" {
		parts = append(parts, s.workload)
	}
	parts = append(parts, pick(s.client, cleanClient), pick(s.ops, cleanOps))
	return strings.Join(parts, "")
}

// cleanExample is the schema every example starts from; it triggers no rule
// at all (a test checks that).
func cleanExample() string { return sections{}.render() }

// withTable is the clean schema's tables plus one more.
func withTable(extra string) string { return cleanTables + extra }

const itemsEntity = `entities:
  order:
    key: orderId
    version: version
    version_kind: event
    fields:
      orderId: {type: string, size: 12}
      customerId: {type: string, size: 10}
      status: {type: string, size: 7}
      placedAt: timestamp
    children:
      items:
        key: line
        max: 200
        typical: 3
        fields: {line: int32, sku: {type: string, size: 8}, quantity: int64}
`

func exampleSections() map[string]sections {
	return map[string]sections{
		"key-monotonic": {tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [placedAt, orderId]      # a clock first: every write goes to the last region
    families:
      d: {}
    columns:
      d:s: status
      d:c: customerId
`, queries: `queries:
  one_order:
    table: orders
    by: [placedAt, orderId]
`},
		"key-read-mismatch": {queries: `queries:
  orders_of_status:
    table: orders
    by: [status]                     # status is not a prefix of [customerId, reverse(placedAt), orderId]
    limit: 100
    rate: 20/s
    latency: 50ms
`},
		"counter-hot-row": {entities: itemsEntity, tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {}
    columns:
      d:s: status
      "d:{line}": items
  daily_orders:
    role: counter
    entity: order
    rowkey: [day(placedAt)]          # one row per day takes every increment
    mode: fast
    add: {c:n: 1}
    families:
      c: {}
`, workload: `workload:
  writes_per_second: 1000
`, ops: `ops:
  presplit: 1
  major_compaction: manual
  durability: sync_wal
`},
		"index-hot-prefix": {tables: withTable(`  orders_by_status:
    role: index
    entity: order
    rowkey: [status, reverse(placedAt), orderId]   # a handful of statuses: a handful of write targets
    families:
      d: {}
`)},
		"family-count": {tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:                        # three families, no setting tells them apart
      a: {}
      b: {}
      c: {}
    columns:
      a:s: status
`},
		"row-unbounded": {entities: strings.Replace(itemsEntity, "max: 200", "max: 500000    # half a million cells in one row", 1), tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {}
    columns:
      d:s: status
      "d:{line}": items
`},
		"cell-huge": {entities: strings.Replace(cleanEntities, "      placedAt: timestamp\n", "      placedAt: timestamp\n      invoice: {type: bytes, size: 12MiB}   # over the 10 MiB cell limit\n", 1), tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {}
    columns:
      d:s: status
      d:p: invoice
`},
		"versions-as-history": {tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {versions: 100}             # the status history, kept as versions
    columns:
      d:s: status
`},
		"names-long": {tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      details: {}
    columns:
      details:current_order_status: status
`},
		"scan-unbounded": {queries: `queries:
  customer_orders:
    table: orders
    by: [customerId]                 # no limit: a big customer means a long scan
    rate: 50/s
    latency: 50ms
`},
		"client-side-join": {tables: withTable(`  orders_by_status:
    role: index
    entity: order
    rowkey: [salt(orderId, 8), status, reverse(placedAt), orderId]
    covering: []                     # thin: each hit needs a read of orders
    families:
      d: {}
`), queries: `queries:
  open_orders:
    table: orders_by_status
    by: [status]
    limit: 100
    rate: 50/s
    latency: 20ms
`},
		"table-as-queue": {tables: withTable(`  order_queue:                       # consumed and deleted item by item
    role: index
    entity: order
    rowkey: [salt(orderId, 4), placedAt, orderId]
    covering: [status]
    families:
      d: {}
    columns:
      d:s: status
`)},
		"connection-per-request": {client: strings.Replace(cleanClient, "per_process", "per_request", 1)},
		"puts-unbatched":         {client: strings.Replace(cleanClient, "batching: buffered", "batching: single", 1)},
		"client-no-timeouts": {client: `client:
  write_buffer: 4MiB                 # neither rpc_timeout nor operation_timeout
  connection: per_process
  batching: buffered
`},
		"presplit-missing": {workload: `workload:
  writes_per_second: 5000            # into a table that starts as one region
`},
		"major-compaction-periodic": {ops: `ops:
  major_compaction: periodic         # no offpeak window
  durability: sync_wal
`},
		"wal-skipped": {ops: `ops:
  major_compaction: manual
  durability: skip_wal               # and the data is not declared regenerable
`},
		"region-size": {ops: `ops:
  major_compaction: manual
  durability: sync_wal
  region_max_filesize: 256MiB        # thousands of small regions
`},
		"counter-not-idempotent": {entities: itemsEntity, tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {}
    columns:
      d:s: status
      "d:{line}": items
  daily_units:
    role: counter
    entity: order
    each: items
    rowkey: [day(placedAt), items.sku]
    buckets: 4
    mode: fast                       # a replayed event counts twice
    add: {c:u: items.quantity}
    families:
      c: {}
`},
		"copy-intent-missing": {entities: `entities:
  order:
    key: orderId
    version: version
    fields:
      orderId: {type: string, size: 12}
      customerId: {type: string, size: 10}
      status: {type: string, size: 7}
      placedAt: timestamp
      customerName: {type: string, size: 24}
    references:
      customer:
        entity: customer
        key: customerId
        copy:
          customerName: name         # snapshot or live?
  customer:
    key: customerId
    version: version
    fields:
      customerId: {type: string, size: 10}
      name: {type: string, size: 24}
`, tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {}
    columns:
      d:s: status
      d:n: customerName
  customers:
    role: primary
    entity: customer
    rowkey: [customerId]
    families:
      d: {}
    columns:
      d:n: name
`},
		"key-fields-mutable": {tables: orderTables},
		"ttl-copy-outlives-primary": {entities: strings.Replace(cleanEntities, "version_kind: event", "version_kind: epoch_ms", 1), tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {ttl: 30d}
    columns:
      d:s: status
  orders_by_status:
    role: index
    entity: order
    rowkey: [salt(orderId, 8), status, reverse(placedAt), orderId]
    covering: [customerId]
    presplit: 8
    families:
      d: {compression: SNAPPY}                # no TTL: rows stay after their orders expire
` + cleanLocator},
		"ttl-bounded-counter": {entities: strings.Replace(itemsEntity, "version_kind: event", "version_kind: epoch_ms", 1), tables: `tables:
  orders:
    role: primary
    entity: order
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {ttl: 30d}
    columns:
      d:s: status
      "d:{line}": items
  daily_units:
    role: counter
    entity: order
    each: items
    rowkey: [day(placedAt), items.sku]
    buckets: 4
    mode: bounded                    # its record of each order expires with the order
    add: {c:u: items.quantity}
    families:
      c: {}
`},
		"ttl-with-version-timestamps": {tables: `tables:
  orders:
    role: primary
    entity: order                    # version_kind: event, so cell timestamps are 1, 2, 3 ...
    rowkey: [customerId, reverse(placedAt), orderId]
    families:
      d: {ttl: 30d}
    columns:
      d:s: status
`},
		"fanout-amplification": {entities: `entities:
  user:
    key: userId
    version: version
    fields: {userId: {type: string, size: 10}}
    children:
      followers: {key: followerId, max: 50000, typical: 300, fields: {followerId: {type: string, size: 10}}}
  post:
    key: postId
    version: version
    fields: {postId: {type: string, size: 12}, authorId: {type: string, size: 10}, postedAt: timestamp}
    references:
      author: {entity: user, key: authorId}
`, tables: `tables:
  users:
    role: primary
    entity: user
    rowkey: [userId]
    families: {f: {}}
    columns: {"f:{followerId}": followers}
  posts:
    role: primary
    entity: post
    rowkey: [postId]
    families: {d: {}}
    columns: {d:a: authorId, d:t: postedAt}
  home_timeline:
    role: fanout                     # every post copied into each follower's timeline
    entity: post
    fanout: {reference: author, list: followers}
    rowkey: [followers.followerId, reverse(postedAt), postId]
    families: {d: {}}
    columns: {d:a: authorId}
`, queries: `queries:
  timeline:
    table: home_timeline
    by: [followers.followerId]
    limit: 50
`, workload: `workload:
  writes_by_entity: {post: 200/s}    # 200 posts/s times 300 followers: 60,000 row writes/s
`},
	}
}
