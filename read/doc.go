// Package read answers the queries a schema declares.
//
// A caller needs New (a Reader for a schema.Plan and a store.Store) and
// Reader.Run with a Request naming the query and the values of the fields
// it is by; Reader.Fields lists those fields and Reader.ParseValue reads
// their text form. A caller's mistake is an error matching ErrBadRequest.
//
// Every query is a Get or a bounded range scan of one table: a salted table
// is read as one range per bucket, merged in key order after the salt. Thin index hits are only
// hints: each is checked against the primary row it points at, and a hit the
// primary row no longer derives is dropped (and, with repair on, deleted at
// its own timestamp, so a newer write of the same row survives).
package read
