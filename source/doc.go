// Package source reads change events from a replayable log and keeps the
// position up to which they are applied: a JSON-lines file with a committed
// offset file beside it, or a Kafka topic read by a consumer group that
// commits its offsets. It also writes dead letters (to a file or a topic).
//
// The contract with the writer: Commit is called only after everything
// returned by Next so far is durably applied, so a restart resumes at the
// committed position and replays at most the uncommitted tail.
package source

// Record is one raw event line and where it came from.
type Record struct {
	Data []byte
	// Offset is the byte offset of the line's start in the file (or the
	// Kafka offset); Line is its 1-based line number, 0 when not a file.
	Offset int64
	Line   int64
	// Stream names the ordered log the record belongs to (one file, one
	// Kafka topic partition): offsets grow within a stream, and a stream's
	// name stays the same across restarts. Bounded counters count each
	// stream's records once by it.
	Stream string
	// Where names the record for people: "events.jsonl:17".
	Where string
}
