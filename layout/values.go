package layout

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/denorm/denorm/rowkey"
)

// EncodeValue encodes one field value for a cell the way HBase's Bytes
// utility would: integers and timestamps big-endian (8 bytes, int32 4
// bytes), float64 as IEEE 754 big-endian, bool as one byte, strings as UTF-8
// and bytes as they are. The HBase shell and Java clients can read them.
func EncodeValue(t rowkey.Type, v any) ([]byte, error) {
	// The usual forms skip Normalize, whose boxing allocates.
	switch x := v.(type) {
	case string:
		if t == rowkey.String {
			return []byte(x), nil
		}
	case int64:
		if t == rowkey.Int64 || t == rowkey.Timestamp {
			return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(x)), nil
		}
	case int32:
		if t == rowkey.Int32 {
			return binary.BigEndian.AppendUint32(make([]byte, 0, 4), uint32(x)), nil
		}
	}
	nv, err := rowkey.Normalize(t, v)
	if err != nil {
		return nil, err
	}
	switch t {
	case rowkey.String:
		return []byte(nv.(string)), nil
	case rowkey.Bytes:
		return nv.([]byte), nil
	case rowkey.Int32:
		return binary.BigEndian.AppendUint32(nil, uint32(nv.(int32))), nil
	case rowkey.Int64, rowkey.Timestamp:
		return binary.BigEndian.AppendUint64(nil, uint64(nv.(int64))), nil
	case rowkey.Float64:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(nv.(float64))), nil
	case rowkey.Bool:
		if nv.(bool) {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	}
	return nil, fmt.Errorf("layout: no cell encoding for type %v", t)
}

// AppendValue appends the encoding EncodeValue gives v to dst.
func AppendValue(dst []byte, t rowkey.Type, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		if t == rowkey.String {
			return append(dst, x...), nil
		}
	case int64:
		if t == rowkey.Int64 || t == rowkey.Timestamp {
			return binary.BigEndian.AppendUint64(dst, uint64(x)), nil
		}
	case int32:
		if t == rowkey.Int32 {
			return binary.BigEndian.AppendUint32(dst, uint32(x)), nil
		}
	}
	b, err := EncodeValue(t, v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// DecodeValue is the inverse of EncodeValue.
func DecodeValue(t rowkey.Type, b []byte) (any, error) {
	switch t {
	case rowkey.String:
		return string(b), nil
	case rowkey.Bytes:
		return append([]byte(nil), b...), nil
	case rowkey.Int32:
		if len(b) != 4 {
			return nil, fmt.Errorf("layout: int32 cell of %d bytes, want 4", len(b))
		}
		return int32(binary.BigEndian.Uint32(b)), nil
	case rowkey.Int64, rowkey.Timestamp:
		if len(b) != 8 {
			return nil, fmt.Errorf("layout: %v cell of %d bytes, want 8", t, len(b))
		}
		return int64(binary.BigEndian.Uint64(b)), nil
	case rowkey.Float64:
		if len(b) != 8 {
			return nil, fmt.Errorf("layout: float64 cell of %d bytes, want 8", len(b))
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case rowkey.Bool:
		if len(b) != 1 || b[0] > 1 {
			return nil, fmt.Errorf("layout: bool cell %x, want one byte 0 or 1", b)
		}
		return b[0] == 1, nil
	}
	return nil, fmt.Errorf("layout: no cell encoding for type %v", t)
}

// Int64Cell is the 8-byte big-endian form of counters (HBase's Increment).
func Int64Cell(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// CellInt64 reads a counter cell.
func CellInt64(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("layout: counter cell of %d bytes, want 8", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}
