// Package schema loads a denorm schema file (YAML), checks it strictly and
// compiles it into a Plan: the entities and their typed fields, the tables
// with their row keys, families and column mappings, the queries and which
// key parts they fix, and the workload, client and operations settings that
// the review, cost, ddl, writer and reader packages work from.
//
// Every problem is reported with file:line and the path of the offending
// field, and loading collects all problems rather than stopping at the
// first. Every Plan element carries the line it was declared on so that
// later findings can point back into the file. docs/schema.md describes the
// file format.
package schema
