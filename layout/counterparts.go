package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/denorm/denorm/store"
)

// A bounded counter row's state is spread over cells that each have one
// writer, so that writers need no check-and-mutate:
//
//   - one part cell per log stream, `\x00s` + the stream's 8-byte id, written
//     only by the stream's writer (one writer per stream: docs/writer.md, A4)
//     with plain puts: the stream's share of the totals (which may be
//     negative) and its sequence and settled position;
//   - the base cell `\x00s` (QualCounterState), written by reconcile's
//     repairs with a check-and-mutate on it as read, and by writers before
//     part cells existed: any totals and sequences.
//
// The row's state is their merge: each total the sum over the cells, each
// stream's sequence and settled position the largest any cell gives.

// CounterPartQualifier is the qualifier of a stream's part cell.
func CounterPartQualifier(stream uint64) []byte {
	return binary.BigEndian.AppendUint64(bytes.Clone(QualCounterState), stream)
}

// CounterPartStream returns the stream of a part cell's qualifier; ok is
// false for any other qualifier.
func CounterPartStream(q []byte) (stream uint64, ok bool) {
	if len(q) != len(QualCounterState)+8 || !bytes.HasPrefix(q, QualCounterState) {
		return 0, false
	}
	return binary.BigEndian.Uint64(q[len(QualCounterState):]), true
}

// IsCounterState reports whether q is a bounded counter row's base or part
// cell.
func IsCounterState(q []byte) bool {
	_, part := CounterPartStream(q)
	return part || bytes.Equal(q, QualCounterState)
}

// StateCell is one state cell of a bounded counter row as read.
type StateCell struct {
	State *CounterState
	Raw   []byte // nil when the row has no such cell
	TS    int64
}

// CounterCells are a bounded counter row's state cells.
type CounterCells struct {
	Base  StateCell
	Parts map[uint64]StateCell // by stream
}

// ReadCounterCells takes the state cells in family fam of a row (newest
// version of each). A row without any is a row never counted in.
func ReadCounterCells(row store.Row, fam string) (*CounterCells, error) {
	cc := &CounterCells{Base: StateCell{State: &CounterState{}}}
	for _, c := range row.Cells {
		if c.Family != fam || !IsCounterState(c.Qualifier) {
			continue
		}
		stream, part := CounterPartStream(c.Qualifier)
		have, seen := cc.Base, cc.Base.Raw != nil
		if part {
			have, seen = cc.Parts[stream]
		}
		if seen && have.TS >= c.Timestamp {
			continue // an older version of a cell already taken
		}
		st, err := DecodeCounterState(c.Value)
		if err != nil {
			return nil, fmt.Errorf("state cell %q: %w", c.Qualifier, err)
		}
		sc := StateCell{State: st, Raw: bytes.Clone(c.Value), TS: c.Timestamp}
		if sc.Raw == nil {
			sc.Raw = []byte{}
		}
		if !part {
			cc.Base = sc
			continue
		}
		if cc.Parts == nil {
			cc.Parts = map[uint64]StateCell{}
		}
		cc.Parts[stream] = sc
	}
	return cc, nil
}

// Part returns a stream's part cell, an empty state when the row has none.
func (cc *CounterCells) Part(stream uint64) StateCell {
	if p, ok := cc.Parts[stream]; ok {
		return p
	}
	return StateCell{State: &CounterState{}}
}

// Counted reports whether the row has any state cell.
func (cc *CounterCells) Counted() bool { return cc.Base.Raw != nil || len(cc.Parts) > 0 }

// Merged is the row's state: totals summed over the cells, each stream's
// sequence and settled position the largest a cell gives.
func (cc *CounterCells) Merged() *CounterState {
	out := &CounterState{Totals: slices.Clone(cc.Base.State.Totals), Seqs: slices.Clone(cc.Base.State.Seqs)}
	streams := make([]uint64, 0, len(cc.Parts))
	for s := range cc.Parts {
		streams = append(streams, s)
	}
	slices.Sort(streams) // the same merge whatever the map's order
	for _, s := range streams {
		p := cc.Parts[s].State
		for _, t := range p.Totals {
			out.Add(t.Family, t.Qualifier, t.Value)
		}
		for _, q := range p.Seqs {
			out.Advance(q.Stream, q.Offset)
			out.Settle(q.Stream, q.Settled)
		}
	}
	return out
}
