package pebble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The database holds three key spaces, told apart by their first byte:
//
//	0x00 "next_table_id"          -> 8-byte big-endian counter
//	0x01 table name               -> table metadata (JSON: id and spec)
//	0x02 table id (8 bytes, BE)   -> cell keys, below
//
// A cell key is
//
//	0x02 | table id | esc(row) | esc(family) | esc(qualifier) | ts' | type'
//
// where esc(x) writes x with every 0x00 byte replaced by 0x00 0xFF and then
// the terminator 0x00 0x01; ts' is the timestamp turned into 8 bytes that sort
// in DESCENDING order of the signed value; type' is 0xFF minus the HBase type
// code, so that higher codes (delete markers) sort first.
//
// Invariants this gives, which the rest of the package relies on:
//
//   - Byte order of cell keys is HBase's KeyValue order: table, then row,
//     family, qualifier as unsigned bytes ascending, then timestamp
//     descending, then type code descending. A terminated esc(x) never is a
//     proper prefix of another terminated esc(y) (0x00 0x01 cannot occur
//     inside an escaped body), and the terminator 0x00 0x01 sorts below both
//     any non-zero byte and the escaped zero 0x00 0xFF, so a shorter part
//     sorts first exactly when it is a prefix of the longer one.
//   - Every key of a row starts with 0x02 | id | esc(row), so a row, a range
//     of rows and a whole table (a table is dropped with one range deletion)
//     are each a contiguous key range.
//   - Family delete markers carry an empty qualifier, as in HBase; they sort
//     before the puts they can mask because puts of the empty qualifier at
//     the same or lower timestamp come after them.
const (
	spaceSeq  byte = 0x00
	spaceMeta byte = 0x01
	spaceData byte = 0x02

	escByte  byte = 0x00
	escZero  byte = 0xFF // 0x00 0xFF is a literal zero byte
	escEnd   byte = 0x01 // 0x00 0x01 ends a part
	tablePfx      = 9    // space byte + 8-byte table id
	tailLen       = 9    // timestamp + type
)

// HBase KeyValue type codes.
const (
	typePut                 byte = 4
	typeDelete              byte = 8
	typeDeleteFamilyVersion byte = 10
	typeDeleteColumn        byte = 12
	typeDeleteFamily        byte = 14
)

var seqKey = []byte{spaceSeq, 'n', 'e', 'x', 't', '_', 't', 'a', 'b', 'l', 'e', '_', 'i', 'd'}

// cellCoord is a decoded cell key.
type cellCoord struct {
	Table     uint64
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp int64
	Type      byte
}

func metaKey(table string) []byte {
	return append([]byte{spaceMeta}, table...)
}

// appendTablePrefix appends the prefix shared by every key of a table.
func appendTablePrefix(dst []byte, id uint64) []byte {
	dst = append(dst, spaceData)
	return binary.BigEndian.AppendUint64(dst, id)
}

// tableBounds returns the key range holding every cell of a table.
func tableBounds(id uint64) (lo, hi []byte) {
	lo = appendTablePrefix(nil, id)
	if id == math.MaxUint64 {
		return lo, []byte{spaceData + 1}
	}
	return lo, appendTablePrefix(nil, id+1)
}

// appendEscaped appends esc(b), terminator included.
func appendEscaped(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, escByte)
		if i < 0 {
			dst = append(dst, b...)
			return append(dst, escByte, escEnd)
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, escZero)
		b = b[i+1:]
	}
}

func appendEscapedString(dst []byte, s string) []byte {
	for {
		i := indexZero(s)
		if i < 0 {
			dst = append(dst, s...)
			return append(dst, escByte, escEnd)
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, escZero)
		s = s[i+1:]
	}
}

func indexZero(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// splitEscaped finds the end of the escaped part at the start of b. It returns
// the part as stored (escaped, terminator excluded), the rest of b after the
// terminator, and whether the body holds escaped zeros (and so needs
// unescaping before use).
func splitEscaped(b []byte) (part, rest []byte, escaped bool, err error) {
	// A plain loop: families and qualifiers are a few bytes, where
	// bytes.IndexByte's setup costs more than it saves.
	for j := 0; j < len(b); j++ {
		if b[j] != escByte {
			continue
		}
		if j+1 >= len(b) {
			break
		}
		switch b[j+1] {
		case escEnd:
			return b[:j], b[j+2:], escaped, nil
		case escZero:
			escaped = true
			j++
		default:
			return nil, nil, false, fmt.Errorf("bad escape 0x00 0x%02x in key part", b[j+1])
		}
	}
	return nil, nil, false, errors.New("unterminated key part")
}

// appendUnescaped appends the bytes an escaped body (from splitEscaped) stands for.
func appendUnescaped(dst, part []byte) []byte {
	for {
		i := bytes.IndexByte(part, escByte)
		if i < 0 {
			return append(dst, part...)
		}
		dst = append(dst, part[:i+1]...)
		part = part[i+2:]
	}
}

// encodeTimestamp maps ts to 8 bytes whose unsigned order is descending ts.
func encodeTimestamp(ts int64) uint64 { return ^(uint64(ts) ^ (1 << 63)) }

func decodeTimestamp(u uint64) int64 { return int64(^u ^ (1 << 63)) }

// appendRowPrefix appends the part of a cell key that every cell of row shares.
func appendRowPrefix(dst []byte, id uint64, row []byte) []byte {
	return appendEscaped(appendTablePrefix(dst, id), row)
}

// appendCellKey appends the key of one cell.
func appendCellKey(dst []byte, id uint64, row []byte, family string, qualifier []byte, ts int64, typ byte) []byte {
	return appendCellSuffix(appendRowPrefix(dst, id, row), family, qualifier, ts, typ)
}

// appendCellSuffix appends what follows the row prefix in a cell key.
func appendCellSuffix(dst []byte, family string, qualifier []byte, ts int64, typ byte) []byte {
	dst = appendEscapedString(dst, family)
	dst = appendEscaped(dst, qualifier)
	dst = binary.BigEndian.AppendUint64(dst, encodeTimestamp(ts))
	return append(dst, 0xFF-typ)
}

// encodeCellKey is appendCellKey for a decoded coordinate.
func encodeCellKey(c cellCoord) []byte {
	return appendCellKey(nil, c.Table, c.Row, string(c.Family), c.Qualifier, c.Timestamp, c.Type)
}

// rawKey is a cell key split into its parts without copying: row, family and
// qualifier are still escaped. Escaping is injective and order-preserving,
// so escaped parts compare and test for equality as the real bytes would.
type rawKey struct {
	rowPrefix []byte // table prefix and esc(row), terminator included
	family    []byte
	qualifier []byte
	famEsc    bool
	qualEsc   bool
	ts        int64
	typ       byte
}

func parseKey(key []byte, rk *rawKey) error {
	prefix, err := splitRowPrefix(key)
	if err != nil {
		return err
	}
	rk.rowPrefix = prefix
	return parseColumn(key, key[len(prefix):], rk)
}

// splitRowPrefix returns the row prefix of a cell key: table prefix and
// esc(row), terminator included.
func splitRowPrefix(key []byte) ([]byte, error) {
	prefix, _, err := splitRow(key)
	return prefix, err
}

// splitRow is splitRowPrefix that also reports whether the row holds
// escaped zeros.
func splitRow(key []byte) (prefix []byte, escaped bool, err error) {
	if len(key) < tablePfx || key[0] != spaceData {
		return nil, false, fmt.Errorf("not a cell key: %x", key)
	}
	body := key[tablePfx:]
	// Rows are longer than families and qualifiers: find the first zero
	// byte at once, and when it starts the terminator the row is plain.
	if i := bytes.IndexByte(body, escByte); i >= 0 && i+1 < len(body) && body[i+1] == escEnd {
		return key[:tablePfx+i+2], false, nil
	}
	_, rest, escaped, err := splitEscaped(body)
	if err != nil {
		return nil, false, fmt.Errorf("cell key %x: row: %w", key, err)
	}
	return key[:len(key)-len(rest)], escaped, nil
}

// parseColumn parses what follows the row prefix in key; rk.rowPrefix must
// already be set. Readers call it directly for the keys after a row's first.
func parseColumn(key, rest []byte, rk *rawKey) error {
	var err error
	if rk.family, rest, rk.famEsc, err = splitEscaped(rest); err != nil {
		return fmt.Errorf("cell key %x: family: %w", key, err)
	}
	if rk.qualifier, rest, rk.qualEsc, err = splitEscaped(rest); err != nil {
		return fmt.Errorf("cell key %x: qualifier: %w", key, err)
	}
	if len(rest) != tailLen {
		return fmt.Errorf("cell key %x: %d bytes after the qualifier, want %d", key, len(rest), tailLen)
	}
	rk.ts = decodeTimestamp(binary.BigEndian.Uint64(rest))
	rk.typ = 0xFF - rest[8]
	return nil
}

// decodeCellKey decodes a cell key into fresh slices.
func decodeCellKey(key []byte) (cellCoord, error) {
	var rk rawKey
	if err := parseKey(key, &rk); err != nil {
		return cellCoord{}, err
	}
	rowPart, _, _, _ := splitEscaped(rk.rowPrefix[tablePfx:])
	return cellCoord{
		Table:     binary.BigEndian.Uint64(key[1:tablePfx]),
		Row:       appendUnescaped([]byte{}, rowPart),
		Family:    appendUnescaped([]byte{}, rk.family),
		Qualifier: appendUnescaped([]byte{}, rk.qualifier),
		Timestamp: rk.ts,
		Type:      rk.typ,
	}, nil
}

// rowOfPrefix returns the row bytes of a row prefix.
func rowOfPrefix(dst, rowPrefix []byte) []byte {
	return appendUnescaped(dst, rowPrefix[tablePfx:len(rowPrefix)-2])
}

// prefixEnd returns the smallest key greater than every key starting with a
// terminated part: the terminator 0x00 0x01 becomes 0x00 0x02, which no
// escaped body can hold at that position.
func prefixEnd(prefix []byte) []byte {
	out := append([]byte(nil), prefix...)
	out[len(out)-1]++
	return out
}
