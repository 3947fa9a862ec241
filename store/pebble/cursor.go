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
	// moveEntered is moveFamily for a reader that has already entered the
	// family in its visibility walk; the cursor never returns it.
	moveEntered
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
	// The rows of a scan mostly have keys of one length: a key whose
	// bytes after the table prefix hold no zero up to where the last
	// row's terminator was, and the terminator there, has a plain row of
	// that length, as splitRow would find.
	if n := c.rowLen; n >= tablePfx+2 && len(key) > n && key[0] == spaceData &&
		key[n-2] == escByte && key[n-1] == escEnd && plainWords(key[tablePfx:n-2]) {
		c.rowEsc = false
	} else {
		prefix, esc, err := splitRow(key)
		if err != nil {
			return err
		}
		c.rowEsc = esc
		c.rowLen = len(prefix)
	}
	// enterFamily copies the row prefix with the rest of the column.
	c.col = c.col[:0]
	return c.enterFamily(key)
}

// plainWords is plain, testing eight bytes at a time.
func plainWords(b []byte) bool {
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		if (w-0x0101010101010101)&^w&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	return plain(b)
}

// next places the key after the current one. It returns moveOut, and
// changes nothing, when the key is not in the current row.
//
// Terminated parts are never prefixes of one another, so a key that starts
// with the current row and family part is in the family, and one that
// starts with the whole current column prefix is another version of the
// column.
func (c *cursor) next(key []byte) (move, error) {
	fe := c.famEnd
	if !hasPart(key, c.col[:fe]) {
		if !hasPart(key, c.col[:c.rowLen]) {
			return moveOut, nil
		}
		c.col = c.col[:c.rowLen]
		if err := c.enterFamily(key); err != nil {
			return moveOut, err
		}
		return moveFamily, nil
	}
	if n := len(c.col); len(key) == n+tailLen && string(key[fe:n]) == string(c.col[fe:]) {
		c.decodeTail(key[n:])
		return moveVersion, nil
	}
	// Another qualifier of the family. A plain one (no zero byte) ends at
	// the terminator tailLen+2 bytes before the end of the key.
	if q := len(key) - tailLen - 2; q >= fe && key[q] == escByte && key[q+1] == escEnd && plainBefore(key, fe, q) {
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
	c.col = append(c.col[:fe], key[fe:fe+len(part)+2]...)
	c.qualEsc = esc
	return moveColumn, nil
}

// enterFamily parses the family, qualifier and tail of key, whose row
// prefix c.col holds (and nothing more), or the start of it (then
// nothing, as first leaves it): c.col gets the rest up to the qualifier's
// terminator in one copy.
func (c *cursor) enterFamily(key []byte) error {
	rest := key[c.rowLen:]
	var afterFam []byte
	famEsc := false
	// A family of up to seven bytes is found in the word that starts
	// it: its first zero byte, when the terminator starts there, ends a
	// plain family (the lowest byte the zero test flags is the first
	// zero). The rest of the key holds at least the tail.
	if i := firstZero(rest); i < 8 && i+1 < len(rest) && rest[i+1] == escEnd {
		afterFam = rest[i+2:]
	} else {
		var err error
		if _, afterFam, famEsc, err = splitEscaped(rest); err != nil {
			return fmt.Errorf("cell key %x: family: %w", key, err)
		}
	}
	c.famEnd = len(key) - len(afterFam)
	// A plain qualifier ends at the terminator tailLen+2 bytes before the
	// end of the key, as in next.
	if q := len(key) - tailLen - 2; q >= c.famEnd && key[q] == escByte && key[q+1] == escEnd && plainBefore(key, c.famEnd, q) {
		c.col = append(c.col, key[len(c.col):q+2]...)
		c.famEsc, c.qualEsc = famEsc, false
		c.decodeTail(key[q+2:])
		return nil
	}
	qual, tail, qualEsc, err := splitEscaped(afterFam)
	if err != nil {
		return fmt.Errorf("cell key %x: qualifier: %w", key, err)
	}
	if len(tail) != tailLen {
		return fmt.Errorf("cell key %x: %d bytes after the qualifier, want %d", key, len(tail), tailLen)
	}
	c.col = append(c.col, key[len(c.col):c.famEnd+len(qual)+2]...)
	c.famEsc, c.qualEsc = famEsc, qualEsc
	c.decodeTail(tail)
	return nil
}

// decodeTail sets the timestamp and type from a key's last tailLen bytes.
func (c *cursor) decodeTail(tail []byte) {
	c.ts = decodeTimestamp(binary.BigEndian.Uint64(tail))
	c.typ = 0xFF - tail[8]
}

// plainBefore reports whether key[from:q] holds no zero byte, and so is
// its own escaping with nothing to undo. Up to eight bytes are tested at
// once in the word that ends at q, with the bytes before from set: a cell
// key has at least tablePfx bytes before any qualifier.
func plainBefore(key []byte, from, q int) bool {
	n := q - from
	if n > 8 || q < 8 || from < 0 {
		return plain(key[from:q])
	}
	w := binary.LittleEndian.Uint64(key[q-8:q]) | ^uint64(0)>>(8*n)
	return (w-0x0101010101010101)&^w&0x8080808080808080 == 0
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

// wordPart reports whether startsWith compares a part of n bytes as words.
func wordPart(n int) bool { return n >= 16 && n <= 32 }

// hasPart reports whether key starts with part, with startsWith when
// wordPart holds for it.
func hasPart(key, part []byte) bool {
	if wordPart(len(part)) {
		return startsWith(key, part)
	}
	return len(key) >= len(part) && string(key[:len(part)]) == string(part)
}

// startsWith reports whether key starts with part, of which wordPart
// holds: four overlapping words are compared, without the call to memequal
// that comparing strings makes (a family part is the table prefix, the row
// key and the family: 16 to 32 bytes for short row keys). The last word
// goes first: it holds the end of the row key and the family, where the
// keys of neighbouring rows differ.
func startsWith(key, part []byte) bool {
	n := len(part)
	if len(key) < n {
		return false
	}
	k := key[:n]
	return binary.LittleEndian.Uint64(k[n-8:]) == binary.LittleEndian.Uint64(part[n-8:]) &&
		binary.LittleEndian.Uint64(k) == binary.LittleEndian.Uint64(part) &&
		binary.LittleEndian.Uint64(k[8:]) == binary.LittleEndian.Uint64(part[8:]) &&
		binary.LittleEndian.Uint64(k[n-16:]) == binary.LittleEndian.Uint64(part[n-16:])
}

// qualWord returns the n bytes (1 <= n <= 8) at key[from:] as the low
// bytes of a little-endian word, the others zero, and whether none of them
// is a zero byte. key must hold at least from+8 bytes: a cell key holds the
// qualifier's terminator and the tail after it. For n = 0 it takes the
// whole word, which holds the terminator's zero byte: not plain.
func qualWord(key []byte, from, n int) (w uint64, plain bool) {
	m := ^uint64(0) >> ((64 - 8*uint(n)) & 63)
	w = binary.LittleEndian.Uint64(key[from:from+8]) & m
	x := w | ^m
	return w, (x-0x0101010101010101)&^x&0x8080808080808080 == 0
}

// firstZero returns the index of the first zero byte among the first
// eight of b, 8 when there is none, or when b is shorter than eight bytes.
func firstZero(b []byte) int {
	if len(b) < 8 {
		return 8
	}
	w := binary.LittleEndian.Uint64(b)
	return bits.TrailingZeros64((w-0x0101010101010101)&^w&0x8080808080808080) >> 3
}
