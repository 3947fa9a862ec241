package reconcile

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Sum is an order-independent checksum of a set of cells: the sum, modulo
// 2^128, of one 128-bit hash per cell. Sums of disjoint sets add, so the
// partial results of any split of the work (parts, goroutines, chunks)
// combine by addition, and a set gives the same sum in whatever order its
// cells were met. A fast-mode counter adds total x hash(cell) instead: a
// linear sketch, so contributions summed on one side and stored totals on
// the other meet at the same value.
type Sum struct{ Hi, Lo uint64 }

// Add adds h to s.
func (s *Sum) Add(h Sum) {
	var c uint64
	s.Lo, c = bits.Add64(s.Lo, h.Lo, 0)
	s.Hi += h.Hi + c
}

// addTimes adds k x h, k signed (two's complement modulo 2^128).
func (s *Sum) addTimes(h Sum, k int64) {
	kk := uint64(k)
	var khi uint64
	if k < 0 {
		khi = ^uint64(0)
	}
	hi, lo := bits.Mul64(h.Lo, kk)
	hi += h.Hi*kk + h.Lo*khi
	s.Add(Sum{Hi: hi, Lo: lo})
}

// MarshalText writes 32 hex digits.
func (s Sum) MarshalText() ([]byte, error) {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], s.Hi)
	binary.BigEndian.PutUint64(b[8:], s.Lo)
	return []byte(hex.EncodeToString(b[:])), nil
}

// UnmarshalText reads 32 hex digits.
func (s *Sum) UnmarshalText(t []byte) error {
	var b [16]byte
	if len(t) != 32 {
		return fmt.Errorf("checksum %q: want 32 hex digits", t)
	}
	if _, err := hex.Decode(b[:], t); err != nil {
		return fmt.Errorf("checksum %q: %w", t, err)
	}
	s.Hi, s.Lo = binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	return nil
}

// hasher hashes cells into one reused buffer; one per goroutine.
type hasher struct{ buf []byte }

// cell hashes a cell's row, family, qualifier and (with value) its value,
// never its timestamp: a copy repaired at another timestamp is the same
// copy. Each part is length-prefixed, so no two cells encode alike.
func (h *hasher) cell(row []byte, fam string, q, val []byte, value bool) Sum {
	b := append(h.buf[:0], 0x5a)
	b = binary.AppendUvarint(b, uint64(len(row)))
	b = append(b, row...)
	b = binary.AppendUvarint(b, uint64(len(fam)))
	b = append(b, fam...)
	b = binary.AppendUvarint(b, uint64(len(q)))
	b = append(b, q...)
	if value {
		b = binary.AppendUvarint(b, uint64(len(val)))
		b = append(b, val...)
	}
	h.buf = b
	// Two hashes of inputs that differ (by the leading byte) make the
	// 128 bits.
	return Sum{Hi: xxhash.Sum64(b), Lo: xxhash.Sum64(b[1:])}
}

// Acc is what one range holds: the checksum of its cells, their number,
// and the number of copies (rows, contributions, counter cells) they make.
type Acc struct {
	Sum    Sum   `json:"sum"`
	Cells  int64 `json:"cells"`
	Copies int64 `json:"copies"`
}

func (a *Acc) add(o Acc) {
	a.Sum.Add(o.Sum)
	a.Cells += o.Cells
	a.Copies += o.Copies
}

func (a Acc) zero() bool { return a == Acc{} }
