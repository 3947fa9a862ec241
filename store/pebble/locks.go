package pebble

import (
	"slices"
	"sync"
)

// rowLocks are striped mutexes keyed by a hash of table and row. Every write
// takes its row's stripe, so Increment and CheckAndMutate (read, then write)
// cannot interleave with another write of the same row. Stripes are always
// taken in ascending order, so batches touching many rows cannot deadlock.
type rowLocks struct {
	mu [256]sync.Mutex
}

func stripe(tableID uint64, row []byte) uint8 {
	// FNV-1a, inlined so that hashing a row does not allocate.
	h := uint64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h ^= (tableID >> (8 * i)) & 0xFF
		h *= 1099511628211
	}
	for _, c := range row {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return uint8(h ^ h>>8 ^ h>>16 ^ h>>32)
}

// lockSet locks the stripes of rows and returns them for unlock. buf is
// reused scratch space.
func (l *rowLocks) lock(tableID uint64, rows [][]byte, buf []uint8) []uint8 {
	buf = buf[:0]
	for _, r := range rows {
		buf = append(buf, stripe(tableID, r))
	}
	slices.Sort(buf)
	buf = slices.Compact(buf)
	for _, i := range buf {
		l.mu[i].Lock()
	}
	return buf
}

func (l *rowLocks) unlock(held []uint8) {
	for _, i := range held {
		l.mu[i].Unlock()
	}
}
