// Package doctor looks for the signatures that HBase anti-patterns leave in a
// running cluster: RegionServer /jmx metrics, the slow log and client log
// files. Each finding names a rule id (the review package's where the cause
// is one of its catalogue entries, a cluster-only id otherwise), the
// evidence and the fix.
//
// Every parser here reads outside input, so none of them fails on a metric,
// field or line it does not know: unknown things are skipped, and only input
// that cannot be read at all (a /jmx document that is not JSON) is an error.
package doctor
