// Package reconcile verifies every copy the schema derives from a primary
// table and repairs what differs: index rows, covering values, lookup rows,
// exact-mode counter contributions, fast-mode counter totals and live copies.
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
// # Limits
//
// Counter orphans (a contribution of an entity that no longer derives it)
// and fast counter totals need every primary row, so they are checked only
// when the run covers the whole table (no key range, no shard). Index and
// lookup orphans are checked by the shard whose key range holds the primary
// key in the row's ref cell.
package reconcile
