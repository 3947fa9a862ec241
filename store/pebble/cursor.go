package pebble

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// move is where a key stands relative to the key a cursor read before it.
type move uint8

const (
	moveOut     move = iota // the key belongs to another row
	moveVersion             // another version (or marker) of the same column
	moveColumn              // the next column of the same family
	moveFamily              // the first column of the next family
)

// cursor follows a row's keys in stored order. It keeps a copy of the
// current column's key prefix, so that the next key is placed by comparing
// prefixes instead of splitting every part of it again: on a scan, most keys
// need one comparison of the row and family part and a scan of the
// qualifier. What it reports is exactly what parseKey would give, errors
// included; the parts it returns stay valid when the iterator moves on.
type cursor struct {
	// col is the current column's key without its tail:
	// row prefix (rowLen bytes) | esc(family) 00 01 (up to famEnd) |
	// esc(qualifier) 00 01.
	col     []byte
	rowLen  int
	famEnd  int
	rowEsc  bool // the row holds escaped zeros
	famEsc  bool // the family holds escaped zeros
	qualEsc bool // the qualifier holds escaped zeros
	ts      int64
	typ     byte
}

// rowPrefix is the table prefix and esc(row), terminator included.
func (c *cursor) rowPrefix() []byte { return c.col[:c.rowLen] }

// row is the row key as stored (escaped).
func (c *cursor) row() []byte { return c.col[tablePfx : c.rowLen-2] }

// family is the current family as stored (escaped).
func (c *cursor) family() []byte { return c.col[c.rowLen : c.famEnd-2] }

// familyPart is the row prefix and the current family with its terminator.
func (c *cursor) familyPart() []byte { return c.col[:c.famEnd] }

// qualifier is the current qualifier as stored (escaped).
func (c *cursor) qualifier() []byte { return c.col[c.famEnd : len(c.col)-2] }

// first places the first key of a row.
func (c *cursor) first(key []byte) error {
	prefix, esc, err := splitRow(key)
	if err != nil {
		return err
	}
	c.rowEsc = esc
	c.rowLen = len(prefix)
	c.col = append(c.col[:0], prefix...)
	return c.enterFamily(key)
}

// next places the key after the current one. It returns moveOut, and
// changes nothing, when the key is not in the current row.
//
// One pass finds how many leading bytes the key shares with the current
// column's prefix; since terminated parts are never prefixes of one another,
// that length alone says whether the key is in another row, another family,
// another column or the same one.
func (c *cursor) next(key []byte) (move, error) {
	d := commonPrefix(key, c.col)
	fe := c.famEnd
	if d < fe {
		if d < c.rowLen {
			return moveOut, nil
		}
		c.col = c.col[:c.rowLen]
		if err := c.enterFamily(key); err != nil {
			return moveOut, err
		}
		return moveFamily, nil
	}
	if d == len(c.col) && len(key) == d+tailLen {
		c.decodeTail(key[d:])
		return moveVersion, nil
	}
	// Another qualifier of the family. A plain one (no zero byte) ends at
	// the terminator tailLen+2 bytes before the end of the key; it cannot be
	// the current qualifier, which the test above would have found.
	if q := len(key) - tailLen - 2; q >= fe && key[q] == escByte && key[q+1] == escEnd && plain(key[fe:q]) {
		c.decodeTail(key[q+2:])
		c.col = append(c.col[:fe], key[fe:q+2]...)
		c.qualEsc = false
		return moveColumn, nil
	}
	// An escaped (or malformed) qualifier: the general split.
	part, tail, esc, err := splitEscaped(key[fe:])
	if err != nil {
		return moveOut, fmt.Errorf("cell key %x: qualifier: %w", key, err)
	}
	if len(tail) != tailLen {
		return moveOut, fmt.Errorf("cell key %x: %d bytes after the qualifier, want %d", key, len(tail), tailLen)
	}
	c.decodeTail(tail)
	if string(part) == string(c.qualifier()) {
		return moveVersion, nil
	}
	c.col = append(c.col[:fe], key[fe:fe+len(part)+2]...)
	c.qualEsc = esc
	return moveColumn, nil
}

// commonPrefix returns the length of the longest common prefix of a and b,
// comparing eight bytes at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	d := 0
	for ; d+8 <= n; d += 8 {
		if x := binary.LittleEndian.Uint64(a[d:]) ^ binary.LittleEndian.Uint64(b[d:]); x != 0 {
			return d + bits.TrailingZeros64(x)>>3
		}
	}
	for d < n && a[d] == b[d] {
		d++
	}
	return d
}

// enterFamily parses the family, qualifier and tail of key, whose row
// prefix c.col holds (and nothing more).
func (c *cursor) enterFamily(key []byte) error {
	rest := key[c.rowLen:]
	_, afterFam, famEsc, err := splitEscaped(rest)
	if err != nil {
		return fmt.Errorf("cell key %x: family: %w", key, err)
	}
	qual, tail, qualEsc, err := splitEscaped(afterFam)
	if err != nil {
		return fmt.Errorf("cell key %x: qualifier: %w", key, err)
	}
	if len(tail) != tailLen {
		return fmt.Errorf("cell key %x: %d bytes after the qualifier, want %d", key, len(tail), tailLen)
	}
	c.famEnd = len(key) - len(afterFam)
	c.col = append(c.col, key[c.rowLen:c.famEnd+len(qual)+2]...)
	c.famEsc, c.qualEsc = famEsc, qualEsc
	c.decodeTail(tail)
	return nil
}

// decodeTail sets the timestamp and type from a key's last tailLen bytes.
func (c *cursor) decodeTail(tail []byte) {
	c.ts = decodeTimestamp(binary.BigEndian.Uint64(tail))
	c.typ = 0xFF - tail[8]
}

// plain reports whether b holds no zero byte, and so is its own escaping
// with nothing to undo.
func plain(b []byte) bool {
	for _, x := range b {
		if x == escByte {
			return false
		}
	}
	return true
}
