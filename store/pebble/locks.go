package pebble

import (
	"encoding/binary"
	"slices"
	"sync"
)

// rowLocks are striped read-write locks keyed by a hash of table and row.
// Every write takes its rows' stripes: a write that reads its row first
// (Increment, CheckAndMutate, a delete of the newest version) takes them
// alone, so that no other write of the row falls between its read and its
// write; a write that reads nothing shares them with others of its kind.
// Two such writes of one row need no order but the one Pebble gives their
// commits, each batch whole, exactly as they would under one lock; sharing
// lets a large batch's calls commit on several cores at once instead of
// one after another (a batch of a few hundred rows holds most stripes).
// Stripes are always taken in ascending order, so batches touching many
// rows cannot deadlock, whatever their modes.
type rowLocks struct {
	mu [256]sync.RWMutex
}

func stripe(tableID uint64, row []byte) uint8 {
	// Eight bytes a step, each word folded in by a multiply and a shift:
	// a hash of one multiply per byte (FNV-1a) took a hundred nanoseconds
	// on a row key of forty bytes, for every row of every write.
	h := (tableID ^ uint64(len(row))) * 0x9e3779b97f4a7c15
	for ; len(row) >= 8; row = row[8:] {
		h = (h ^ binary.LittleEndian.Uint64(row)) * 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	var tail uint64
	for i, c := range row {
		tail |= uint64(c) << (8 * i)
	}
	h = (h ^ tail) * 0xc4ceb9fe1a85ec53
	h ^= h >> 29
	return uint8(h ^ h>>8 ^ h>>16 ^ h>>32)
}

// lock takes the stripes of rows, alone or shared, and returns them for
// unlock. buf is reused scratch space.
func (l *rowLocks) lock(tableID uint64, rows [][]byte, buf []uint8, shared bool) []uint8 {
	buf = buf[:0]
	for _, r := range rows {
		buf = append(buf, stripe(tableID, r))
	}
	slices.Sort(buf)
	buf = slices.Compact(buf)
	for _, i := range buf {
		if shared {
			l.mu[i].RLock()
		} else {
			l.mu[i].Lock()
		}
	}
	return buf
}

// unlock releases what lock took, in the same mode.
func (l *rowLocks) unlock(held []uint8, shared bool) {
	for _, i := range held {
		if shared {
			l.mu[i].RUnlock()
		} else {
			l.mu[i].Unlock()
		}
	}
}
