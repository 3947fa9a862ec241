// Package hbase is the store.Store backend for Apache HBase, reached through
// HBase's Thrift2 gateway (org.apache.hadoop.hbase.thrift2.ThriftServer).
//
// URL: hbase://host:port with optional query parameters
//
//	timeout=10s          per-call deadline (connect and every RPC)
//	connect_timeout=5s   dial deadline; defaults to timeout
//	pool=32              connections kept, and calls in flight at once
//	transport=buffered   or framed: must match the server's -f flag
//	protocol=binary      or compact: must match the server's -c flag
//	namespace=default    the namespace of names without "ns:"
//	max_cell_size=N      client-side cell limit (bytes, KeyValue size)
//	max_row_size=N       client-side row limit on reads (bytes)
//	durability=D         for mutations that ask for the default
//
// What Thrift2 cannot do, and what this backend does about it:
//
//   - It has no compaction call: MajorCompact returns store.ErrUnsupported.
//     Use the HBase shell's major_compact or the Java Admin API.
//   - It exposes no request counters: Regions reports boundaries, servers
//     and encoded region names (the ids /jmx uses, read from hbase:meta,
//     since the gateway's region locations leave the region id out) with
//     zero counts.
//   - Its errors are Java exception messages. They are mapped to the store's
//     errors by their text, and, where the text is ambiguous (HBase's
//     TableNotFoundException message is only the table's name), by asking
//     the server whether the table exists.
//
// A Thrift client is not safe for concurrent use, so each Store keeps a
// small pool of connections; a connection that saw a transport or protocol
// error is closed rather than reused.
package hbase
