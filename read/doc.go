// Package read answers the queries a schema declares. Every query is a Get
// or a bounded range scan of one table: a salted table is read as one range
// per bucket, merged in key order after the salt. Thin index hits are only
// hints: each is checked against the primary row it points at, and a hit the
// primary row no longer derives is dropped (and, with repair on, deleted at
// its own timestamp, so a newer write of the same row survives).
package read
