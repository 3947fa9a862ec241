// Package event is the change-event format the writer consumes: one JSON
// object per line, validated against a schema.Plan.
//
//	{"id":"e-17","entity":"order","key":"o-1","version":3,"op":"upsert",
//	 "state":{"orderId":"o-1","status":"PAID",...,"items":[{"line":1,...}]},
//	 "hints":{"status":"OPEN"}}
//
// docs/events.md documents every field. Decode turns a line into an Event
// whose values are normalized to the schema's Go types (rowkey.Normalize), so
// that everything downstream can encode keys and cells without re-checking.
package event

// Op is what an event does to its entity.
type Op string

const (
	// Upsert sets the entity to State (the whole new state, not a patch).
	Upsert Op = "upsert"
	// Delete removes the entity.
	Delete Op = "delete"
)

// Event is one validated change of one entity.
type Event struct {
	// ID identifies the event for logs and dead letters; optional.
	ID     string
	Entity string
	// Key holds the entity's key fields, normalized.
	Key map[string]any
	// Version grows with every change of the entity; it becomes the cell
	// timestamp of everything the event writes. Always >= 1.
	Version int64
	Op      Op
	// State is the full new state for an upsert: entity fields by name, and
	// child lists by name as []map[string]any. Nil for a delete.
	State map[string]any
	// Hints are the previous values of indexed fields, when the producer
	// knows them; nil otherwise.
	Hints map[string]any
	// Stream and Offset say where the event was read: the log (a file, a
	// Kafka topic partition) and its position there, set by write.Run from
	// the source record. Bounded counters count each stream's events once
	// by them, and the writer tells by them a write a crash may have cut
	// short; Stream is empty for an event that came from no log.
	Stream string
	Offset int64
}

// KeyString renders the key for logs and grouping: the values of the key
// fields in schema order, joined by '/'.
func (e *Event) KeyString(keyFields []string) string {
	s := ""
	for i, f := range keyFields {
		if i > 0 {
			s += "/"
		}
		s += formatScalar(e.Key[f])
	}
	return s
}
