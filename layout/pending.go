package layout

import (
	"encoding/binary"
	"fmt"
)

// Position is where an event was in its log: the stream's StreamID and the
// event's offset in it.
type Position struct {
	Stream uint64
	Offset int64
}

// pendingAt starts the position after a pending record's refs. A record
// without one (written before records carried it) ends with its refs.
const pendingAt = 0x01

// pendingAtSize is the most a position adds: the tag, the stream and the
// offset as a varint.
const pendingAtSize = 1 + 8 + binary.MaxVarintLen64

// EncodePending serializes the pending record of a primary row: the refs
// the version's write deletes (EncodeRefs) and, when known, the position
// of the event that made the version.
func EncodePending(refs []Ref, at *Position) []byte {
	out := EncodeRefs(refs)
	if at == nil {
		return out
	}
	out = append(out, pendingAt)
	out = binary.BigEndian.AppendUint64(out, at.Stream)
	return binary.AppendVarint(out, at.Offset)
}

// DecodePending is the inverse of EncodePending; at is nil when the record
// names no position.
func DecodePending(b []byte) (refs []Ref, at *Position, err error) {
	refs, rest, err := decodeRefs(b)
	if err != nil || len(rest) == 0 {
		return refs, nil, err
	}
	if rest[0] != pendingAt || len(rest) < 1+8+1 {
		return nil, nil, fmt.Errorf("%d bytes after the last ref are no position", len(rest))
	}
	at = &Position{Stream: binary.BigEndian.Uint64(rest[1:9])}
	off, m := binary.Varint(rest[9:])
	if m <= 0 || 9+m != len(rest) {
		return nil, nil, fmt.Errorf("bad position after the refs")
	}
	at.Offset = off
	return refs, at, nil
}
