// Package reconcile verifies every copy the schema derives from a primary
// table and repairs what differs: index rows, covering values, lookup rows,
// exact-mode counter contributions, fast-mode counter totals and live copies.
//
// A caller needs Run, with Options saying what to cover (a table, a key
// range, a Shard from ParseShard) and whether to repair (DryRun), and reads
// the Report it returns: Differences, Failed, WriteText, WriteMetrics; or,
// split over many processes, NewPlan, RunPart and Merge. The examples show
// a scheduled run; docs/library.md puts it in context.
//
// It recomputes copies with package layout (ReadState, DeriveCopies,
// LiveRefs), the same code the writer uses, so the two cannot disagree on
// where data lives; it has no layout logic of its own.
//
// # Checksummed ranges: memory that does not grow with the table
//
// A Plan (plan.go) cuts every derived table's key space into ranges of about
// PlanOptions.RangeRows rows, placed from a sample of the primary table, and
// the primary table into parts. A single-process run of one part needs no
// agreement with other parts, so it skips the sample: it cuts each derived
// table into ranges of at most RangeRows stored rows as it scans them
// (cut.go), and derives the primary rows into those ranges afterwards. The primary pass reads each entity's row,
// derives its copies, and adds a 128-bit hash of every expected cell (row,
// family, qualifier, value; never the timestamp) to the checksum of the
// range the cell falls in: a sum modulo 2^128, so that partial sums from any
// split of the work add up (hash.go). Fast-mode totals enter a linear sketch
// of the same kind, delta x hash(cell), which the stored totals meet as
// total x hash(cell) (counters.go, one function per mode). A scan of each
// range builds the same checksum from what the store holds. Equal ranges are
// done; only unequal ones are diffed row by row (diff.go), in groups of at
// most Options.DiffCells cells: the primary table is scanned again and the
// copies falling in those ranges kept, then each range is scanned and
// compared with them. State grows with the number of ranges, a chunk of rows
// and caches of fixed size (refcache.go), never with the table. A clean run
// reads each table once (plus, for a sharded single-process run, the plan's
// sample scan of the primary table); Report.RowsRead and Report.Gets say what a run
// read.
//
// # Parts, and the three ways to run
//
//   - Run: one process. It plans, runs its part and merges. With Shard i/n,
//     each of n processes reads every primary row but keeps the checksums of
//     the ranges dealt to it, so its result is final alone.
//   - RunPart then Merge: part i derives the primary rows of its primary
//     range into the expected checksums of every range, and scans its own
//     derived ranges (range j belongs to part j mod Parts). Its Partial result
//     can be rerun alone. Merge adds every part's checksums, diffs the unequal
//     ranges and repairs them. This is what a Kubernetes Indexed Job runs
//     (deploy/k8s/reconcile-job.yaml, docs/reconcile.md).
//
// An entity with a locator table has its locator checked in the primary
// pass, one multi-get per chunk and worker (locator.go): the writer skips
// the primary-row reads of an entity whose locator row is empty, which is
// only right while every primary row holding a state is covered there.
//
// Counters are checked by every run, whole or in parts; Options.Since limits
// the counter check to the counter rows of a recent window (window.go), the
// same on both sides of the checksums.
//
// # Timestamps: why a repair never rolls back a newer write
//
// Every repair is stamped so that a write the writer makes while the job
// runs, at a higher entity version, always wins:
//
//   - A missing or stale derived cell is put at the entity's version v, read
//     from the primary row. The writer writes the primary row before any
//     derived row, so a version the job has not seen is > v; its puts shadow
//     ours, and when it stops deriving the row it deletes it at (new
//     version - 1) >= v, a marker that masks our put even if ours lands later.
//   - A stale row's extra columns (present in the store, not derived) are
//     deleted at their own timestamp, and only when it is <= v. A cell
//     newer than v means a newer write is in flight: the row is left alone.
//   - An orphan (a derived row no state derives) is deleted only after the
//     primary row is read again, and at the orphan's own newest cell
//     timestamp, never newer: a later write of the same row carries a higher
//     version and survives the marker. A contribution whose entity the
//     re-derivation did not meet is decided after one more scan of the
//     primary table: the writer writes a primary row before its
//     contributions, so an entity absent from that later scan has no row.
//   - A live copy is rewritten at the reference row's timestamp (the
//     referenced entity's version), as the writer's refresh would; a copy
//     with a newer timestamp than the reference row is left alone.
//   - A fast-mode counter total is set with a CheckAndMutate on the value the
//     job read, so an increment that lands in between makes the set fail
//     rather than be lost; the next run recomputes it.
//
// # Repairs that take effect
//
// Every repair is read back (repair.go). A put that a delete marker at or
// above its timestamp masks is accepted by the store and stays invisible:
// it is counted failed, with its cause, and the run exits 1. With
// Options.PurgeMarkers the job major-compacts the table and repairs again
// (the embedded store's compaction is done when the call returns). The
// report counts differences before the repair and those left after it.
package reconcile
