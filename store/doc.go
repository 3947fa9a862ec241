// Package store is HBase's data model as a Go interface.
//
// A caller needs Open, which gives a Store for a URL (pebble://DIR for the
// embedded backend, hbase://HOST:9090 for HBase through Thrift2; the
// backend's package is imported for its side effect), and the request types
// of its methods: Get, Scan, RowMutation with its Mutations, Increment and
// Condition. BufferedMutator batches writes as HBase's client does.
//
// A table is a sorted map: row -> family -> qualifier -> timestamp -> value.
// Every denorm package talks to a Store; backends (store/pebble, store/hbase)
// implement it and must pass the conformance suite in store/storetest.
//
// Invariants every backend keeps (storetest checks each one):
//
//   - Row keys sort as unsigned bytes. Within a row, cells sort by family,
//     qualifier ascending, then timestamp descending.
//   - A delete marker masks every put of the same coordinates at or below its
//     timestamp, including puts written after the marker, until MajorCompact
//     purges the marker.
//   - Reads return at most the family's MaxVersions versions of a column, and
//     never a cell older than the family's TTL (measured against the cell
//     timestamp in milliseconds).
//   - A RowMutation is atomic: a reader sees all of it or none of it.
//     Increment and CheckAndMutate are atomic on their row. Nothing spans rows.
//   - A cell larger than the maximum cell size is refused; a read of a row
//     larger than the maximum row size fails with ErrRowTooBig.
//
// Backends are chosen by URL scheme through Open; a backend registers its
// scheme with Register from its init function, as database/sql drivers do.
package store
