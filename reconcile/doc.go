// Package reconcile verifies every copy the schema derives from a primary
// table and repairs what differs: index rows, covering values, lookup rows,
// exact-mode counter contributions, fast-mode counter totals and live copies.
//
// A caller needs Run, with Options saying what to cover (a table, a key
// range, a Shard from ParseShard) and whether to repair (DryRun), and reads
// the Report it returns: Differences, Failed, WriteText, WriteMetrics. The
// examples show a scheduled run; docs/library.md puts it in context.
//
// It recomputes copies with package layout (ReadState, Derive, LiveRefs), the
// same code the writer uses, so the two cannot disagree on where data lives.
//
// # Timestamps: why a repair never rolls back a newer write
//
// Every repair is stamped so that a write the writer makes while the job runs,
// at a higher entity version, always wins:
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
//     version and survives the marker.
//   - A live copy is rewritten at the reference row's timestamp (the
//     referenced entity's version), as the writer's refresh would; a copy
//     with a newer timestamp than the reference row is left alone.
//   - A fast-mode counter total is set with a CheckAndMutate on the value the
//     job read, so an increment that lands in between makes the set fail
//     rather than be lost; the next run recomputes it.
//
// # What a run does
//
// For each primary row in the run's ranges, layout.ReadState rebuilds the
// entity (a deleted or tombstoned one derives nothing) and layout.DeriveCopies
// lists every index row, lookup row and exact-mode contribution it owns.
// Live copies are compared with the lookup table's reference row. Then each
// index and lookup table is scanned once:
// rows the primary pass derived are compared (valid or stale; those the
// scan does not meet are read again, and missing if still absent), and the
// others are orphans when their ref cell names a primary row in the run's
// ranges that is gone, deleted, or derives other rows. A run over the whole
// table also scans the counter tables: exact-mode contributions no entity
// derives are orphans, derived ones are compared as index rows are (a run
// over part of the table reads its contributions with a Get each instead);
// fast-mode totals are compared with the sums of every entity's
// contribution and counted drifted. A dry run counts only; the
// report also counts the cells repaired and the repairs the store refused.
//
// Sharding deals the primary table's regions round robin, so a table with
// fewer regions than shards leaves some shards idle.
//
// # Limits
//
// Counter orphans (a contribution of an entity that no longer derives it)
// and fast counter totals need every primary row, so they are checked only
// when the run covers the whole table (no key range, no shard). Index and
// lookup orphans are checked by the shard whose key range holds the primary
// key in the row's ref cell. An exact-mode contribution of an entity the
// primary pass did not see is decided after a second scan of the primary
// table: the writer writes a primary row before its contributions, so an
// entity missing from that later scan has no primary row.
//
// Speed (BenchmarkReconcile; figures in docs/BENCHMARKS.md): a dry run
// checks 8,400 to 10,000 orders a second, 0.025 to 0.030 of a raw scan of
// the primary table; a raw scan of every table the job reads, with no
// checking, is itself only 0.27 to 0.32 of it (an order has 11.6 copies). The job's
// own time is ReadState and DeriveCopies per entity.
//
// Options.Since limits the counter check to the counter rows of a recent
// window (see window.go); the other copies are always checked whole.
package reconcile
