// Package write is the idempotent writer: it applies batches of entity
// change events to the primary row and every copy the schema derives from
// it, so that replays, duplicates, reordering and crashes between writes all
// converge to the newest state of every entity.
//
// A caller needs New (a Writer for a schema.Plan and a store.Store) and
// Writer.Apply, with events from event.Decode; Run drives a Writer over a
// replayable log (a Source such as source.File or source.Kafka) with
// DeadLetters for what it refuses. The examples show both; docs/library.md
// puts them in context.
//
// docs/writer.md explains the design; the invariants the code keeps are:
//
//   - Every cell an event writes has the event version as its timestamp;
//     every delete of what an older version wrote is at version-1.
//   - Within a batch, all primary rows are written before any derived row.
//   - Events of one entity are folded in log order; entities are independent.
//   - Apply returns only when everything it wrote is durable, so a caller may
//     then commit its log offset.
package write
