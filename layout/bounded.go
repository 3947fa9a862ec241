package layout

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/denorm/denorm/schema"
)

// Bounded counters (mode: bounded) keep, per counter row, one total per add
// column and one sequence per log stream; each entity's primary row keeps a
// Counted record of what those totals hold of it. docs/writer.md has the
// invariant that ties the two together and why it makes the totals exact.

var (
	// QualCounted is the Counted record in a primary row's first family,
	// written at the version of the state whose counts it records.
	QualCounted = []byte("\x00c")
	// QualCounterState is a bounded counter row's base state cell (totals
	// and stream sequences), in the family of the table's first add
	// column; each stream's part cell is this qualifier and the stream's
	// id (counterparts.go). Reconcile's repairs write the base cell.
	QualCounterState = []byte("\x00s")
	// QualMoved, in the primary row an entity moved into, holds the
	// writer's clock (milliseconds since the epoch, MovedCell) when it
	// wrote the move, at the move's version. Reconcile needs it: a move
	// while its scan runs can put the entity's record where the scan has
	// already passed, or in two rows it meets at different times
	// (reconcile/bounded.go, "moves under way").
	QualMoved = []byte("\x00m")
)

// MovedCell encodes a QualMoved cell; ParseMoved decodes it.
func MovedCell(wallMillis int64) []byte { return Int64Cell(wallMillis) }

// ParseMoved decodes a QualMoved cell.
func ParseMoved(b []byte) (int64, error) {
	v, err := CellInt64(b)
	if err != nil {
		return 0, fmt.Errorf("layout: moved cell: %w", err)
	}
	return v, nil
}

// StreamID names a log stream (a file, a Kafka topic partition) in 8 bytes:
// FNV-1a 64 of its name. Counter rows store the id, not the name.
func StreamID(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// Count is one entity's count in one cell of a bounded counter row: Base is
// what the row's total holds of the entity while the row's sequence for the
// record's stream is below the record's offset, Now what it holds once the
// sequence has reached it.
type Count struct {
	Ref
	Base, Now int64
}

// Counted is what the bounded totals hold of one entity: the stream and
// offset of the event whose counts the record took, and per counter cell
// the value before and after that event was counted.
type Counted struct {
	Stream uint64
	Offset int64
	Counts []Count // sorted by ref; no count has Base and Now both zero
}

// Included is the entity's share of a counter cell's total, given the row's
// sequence for the record's stream (seq < 0: the row has none).
func (c *Counted) Included(r Ref, seq int64) int64 {
	if c == nil {
		return 0
	}
	i, ok := slices.BinarySearchFunc(c.Counts, r, func(x Count, r Ref) int { return x.Compare(r) })
	if !ok {
		return 0
	}
	if seq >= c.Offset {
		return c.Counts[i].Now
	}
	return c.Counts[i].Base
}

// Fixed is the entity's share of a counter cell's total when it does not
// depend on the row's sequence: the record names the cell with Base equal
// to Now, or does not name it (0). ok is false when the share is Base or
// Now depending on the sequence.
func (c *Counted) Fixed(r Ref) (v int64, ok bool) {
	if c == nil {
		return 0, true
	}
	i, found := slices.BinarySearchFunc(c.Counts, r, func(x Count, r Ref) int { return x.Compare(r) })
	if !found {
		return 0, true
	}
	if x := c.Counts[i]; x.Base == x.Now {
		return x.Now, true
	}
	return 0, false
}

// NowValues returns, by ref ID, the counts the record says the totals
// hold of the entity once every row has counted its event.
func (c *Counted) NowValues() map[string]int64 {
	out := map[string]int64{}
	if c == nil {
		return out
	}
	for _, x := range c.Counts {
		if x.Now != 0 {
			out[x.ID()] = x.Now
		}
	}
	return out
}

// EncodeCounted serializes a record; DecodeCounted reads it back.
func EncodeCounted(c *Counted) []byte {
	counts := append([]Count(nil), c.Counts...)
	slices.SortFunc(counts, func(a, b Count) int { return a.Compare(b.Ref) })
	out := binary.BigEndian.AppendUint64(nil, c.Stream)
	out = binary.AppendVarint(out, c.Offset)
	out = binary.AppendUvarint(out, uint64(len(counts)))
	for _, x := range counts {
		for _, part := range [][]byte{[]byte(x.Table), x.Row, []byte(x.Family), x.Qualifier} {
			out = binary.AppendUvarint(out, uint64(len(part)))
			out = append(out, part...)
		}
		out = binary.AppendVarint(out, x.Base)
		out = binary.AppendVarint(out, x.Now)
	}
	return out
}

// DecodeCounted is the inverse of EncodeCounted.
func DecodeCounted(b []byte) (*Counted, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("counted record: %d bytes, too short", len(b))
	}
	c := &Counted{Stream: binary.BigEndian.Uint64(b)}
	b = b[8:]
	var k int
	if c.Offset, k = binary.Varint(b); k <= 0 {
		return nil, fmt.Errorf("counted record: bad offset")
	}
	b = b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("counted record: bad count")
	}
	rd := refReader{b: owned(b[k:])}
	if n > 0 {
		c.Counts = make([]Count, 0, n)
	}
	for i := uint64(0); i < n; i++ {
		r, ok := rd.ref()
		if !ok {
			return nil, fmt.Errorf("counted record: count %d is truncated", i)
		}
		x := Count{Ref: r}
		if x.Base, k = binary.Varint(rd.b); k <= 0 {
			return nil, fmt.Errorf("counted record: count %d: bad base", i)
		}
		rd.b = rd.b[k:]
		if x.Now, k = binary.Varint(rd.b); k <= 0 {
			return nil, fmt.Errorf("counted record: count %d: bad value", i)
		}
		rd.b = rd.b[k:]
		c.Counts = append(c.Counts, x)
	}
	if len(rd.b) != 0 {
		return nil, fmt.Errorf("counted record: %d bytes after the last count", len(rd.b))
	}
	return c, nil
}

// Seq is how far a counter row has counted one stream: every event of the
// stream at or below Offset is in the row's totals, none above it. Settled
// is what the writer knew, when it last wrote the row, of the whole
// stream: every event below Settled is counted in every row it counts in
// (the batch began there, and the batches before it completed). It tells
// reconcile which records are no longer in flight.
type Seq struct {
	Stream  uint64
	Offset  int64
	Settled int64
}

// Total is one add column's total in a bounded counter row.
type Total struct {
	Family    string
	Qualifier []byte
	Value     int64
}

// CounterState is a bounded counter row's state cell.
type CounterState struct {
	Totals []Total // sorted by family, qualifier
	Seqs   []Seq   // sorted by stream
}

// Seq returns the row's sequence for a stream, -1 when it has none.
func (s *CounterState) Seq(stream uint64) int64 {
	i, ok := s.findSeq(stream)
	if !ok {
		return -1
	}
	return s.Seqs[i].Offset
}

// Advance raises a stream's sequence to at least off.
func (s *CounterState) Advance(stream uint64, off int64) {
	q := s.seq(stream)
	q.Offset = max(q.Offset, off)
}

// Settle raises what the row says of a stream's settled position.
func (s *CounterState) Settle(stream uint64, settled int64) {
	q := s.seq(stream)
	q.Settled = max(q.Settled, settled)
}

// Settled returns the row's settled position of a stream, -1 when none.
func (s *CounterState) Settled(stream uint64) int64 {
	i, ok := s.findSeq(stream)
	if !ok {
		return -1
	}
	return s.Seqs[i].Settled
}

func (s *CounterState) seq(stream uint64) *Seq {
	i, ok := s.findSeq(stream)
	if !ok {
		s.Seqs = slices.Insert(s.Seqs, i, Seq{Stream: stream, Offset: -1, Settled: -1})
	}
	return &s.Seqs[i]
}

// Total returns an add column's total (0 when the row has none).
func (s *CounterState) Total(family string, qualifier []byte) int64 {
	if i, ok := s.findTotal(family, qualifier); ok {
		return s.Totals[i].Value
	}
	return 0
}

// Add adds delta to an add column's total.
func (s *CounterState) Add(family string, qualifier []byte, delta int64) {
	i, ok := s.findTotal(family, qualifier)
	if !ok {
		s.Totals = slices.Insert(s.Totals, i, Total{Family: family, Qualifier: bytes.Clone(qualifier)})
	}
	s.Totals[i].Value += delta
}

// Set sets an add column's total.
func (s *CounterState) Set(family string, qualifier []byte, v int64) {
	s.Add(family, qualifier, v-s.Total(family, qualifier))
}

func (s *CounterState) findTotal(family string, qualifier []byte) (int, bool) {
	return slices.BinarySearchFunc(s.Totals, Total{Family: family, Qualifier: qualifier}, func(a, b Total) int {
		if c := strings.Compare(a.Family, b.Family); c != 0 {
			return c
		}
		return bytes.Compare(a.Qualifier, b.Qualifier)
	})
}

func (s *CounterState) findSeq(stream uint64) (int, bool) {
	return slices.BinarySearchFunc(s.Seqs, stream, func(x Seq, id uint64) int { return cmp.Compare(x.Stream, id) })
}

// stateMagic starts a state cell, so that a foreign value is not misread.
const stateMagic = 0xB1

// EncodeCounterState serializes a state cell.
func EncodeCounterState(s *CounterState) []byte {
	out := []byte{stateMagic}
	out = binary.AppendUvarint(out, uint64(len(s.Totals)))
	for _, t := range s.Totals {
		out = binary.AppendUvarint(out, uint64(len(t.Family)))
		out = append(out, t.Family...)
		out = binary.AppendUvarint(out, uint64(len(t.Qualifier)))
		out = append(out, t.Qualifier...)
		out = binary.AppendVarint(out, t.Value)
	}
	out = binary.AppendUvarint(out, uint64(len(s.Seqs)))
	for _, q := range s.Seqs {
		out = binary.BigEndian.AppendUint64(out, q.Stream)
		out = binary.AppendVarint(out, q.Offset)
		out = binary.AppendVarint(out, q.Settled)
	}
	return out
}

// DecodeCounterState is the inverse of EncodeCounterState; nil or empty
// is the state of a row never counted.
func DecodeCounterState(b []byte) (*CounterState, error) {
	s := &CounterState{}
	if len(b) == 0 {
		return s, nil
	}
	if b[0] != stateMagic {
		return nil, fmt.Errorf("counter state: not a bounded counter state cell")
	}
	b = b[1:]
	str := func() ([]byte, bool) {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, false
		}
		v := append([]byte(nil), b[k:k+int(l)]...)
		b = b[k+int(l):]
		return v, true
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("counter state: bad total count")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		f, ok1 := str()
		q, ok2 := str()
		v, k := binary.Varint(b)
		if !ok1 || !ok2 || k <= 0 {
			return nil, fmt.Errorf("counter state: total %d is truncated", i)
		}
		b = b[k:]
		s.Totals = append(s.Totals, Total{Family: string(f), Qualifier: q, Value: v})
	}
	n, k = binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("counter state: bad sequence count")
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		if len(b) < 8 {
			return nil, fmt.Errorf("counter state: sequence %d is truncated", i)
		}
		id := binary.BigEndian.Uint64(b)
		off, k := binary.Varint(b[8:])
		if k <= 0 {
			return nil, fmt.Errorf("counter state: sequence %d is truncated", i)
		}
		b = b[8+k:]
		settled, k := binary.Varint(b)
		if k <= 0 {
			return nil, fmt.Errorf("counter state: sequence %d is truncated", i)
		}
		b = b[k:]
		s.Seqs = append(s.Seqs, Seq{Stream: id, Offset: off, Settled: settled})
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("counter state: %d bytes after the last sequence", len(b))
	}
	return s, nil
}

// CounterStateFamily is the family of a bounded counter table's state cell.
func CounterStateFamily(t *schema.Table) string {
	if t.Counter != nil && len(t.Counter.Adds) > 0 {
		return t.Counter.Adds[0].Family
	}
	return t.Families[0].Name
}

// BoundedTables lists an entity's bounded counter tables.
func BoundedTables(plan *schema.Plan, entity string) []*schema.Table {
	var out []*schema.Table
	for _, t := range plan.TablesOf(entity) {
		if t.Role == schema.RoleCounter && t.Counter.Bounded() {
			out = append(out, t)
		}
	}
	return out
}
