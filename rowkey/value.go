package rowkey

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Variable-length values end with terminator; a zero byte inside the value
// becomes zeroEscape. Because the terminator's second byte (0x01) is below
// the escape's (0xFF) and above nothing a value can contain after a zero, a
// shorter value sorts before any longer value it is a prefix of, and no
// encoding is a prefix of another.
const (
	escByte     = 0x00
	escTerm     = 0x01
	escZero     = 0xFF
	signFlip64  = uint64(1) << 63
	signFlip32  = uint32(1) << 31
	maxStrBytes = 1 << 20 // a key part larger than this is certainly a mistake
)

// ErrCorrupt is wrapped by every decoding failure.
var ErrCorrupt = errors.New("rowkey: malformed key")

// Normalize converts v to the canonical Go type for t: string for String,
// []byte for Bytes, int32, int64, int64 milliseconds for Timestamp, bool and
// float64. It accepts the forms JSON decoding and callers commonly produce
// (any Go integer, integral float64, json.Number, time.Time and RFC 3339
// strings for timestamps).
func Normalize(t Type, v any) (any, error) {
	switch t {
	case String:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case Bytes:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case Int32:
		n, err := toInt64(v)
		if err != nil {
			return nil, err
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("value %d out of int32 range", n)
		}
		return int32(n), nil
	case Int64:
		return toInt64(v)
	case Timestamp:
		switch x := v.(type) {
		case time.Time:
			return x.UnixMilli(), nil
		case string:
			tm, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				return nil, fmt.Errorf("timestamp %q: want RFC 3339 or epoch milliseconds", x)
			}
			return tm.UnixMilli(), nil
		}
		return toInt64(v)
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case Float64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		case json.Number:
			var err error
			if f, err = x.Float64(); err != nil {
				return nil, fmt.Errorf("float64 %q: %w", x, err)
			}
		default:
			n, err := toInt64(v)
			if err != nil {
				return nil, err
			}
			f = float64(n)
		}
		if math.IsNaN(f) {
			return nil, errors.New("NaN has no place in a sorted key")
		}
		if f == 0 {
			f = 0 // fold -0 into +0 so equal numbers encode equally
		}
		return f, nil
	default:
		return nil, fmt.Errorf("no encoding for type %v", t)
	}
	return nil, fmt.Errorf("cannot use %T as %v", v, t)
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, fmt.Errorf("value %d out of int64 range", x)
		}
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("value %d out of int64 range", x)
		}
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, fmt.Errorf("value %v is not an integer", x)
		}
		return int64(x), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("integer %q: %w", string(x), err)
		}
		return n, nil
	}
	return 0, fmt.Errorf("cannot use %T as an integer", v)
}

// AppendValue appends the order-preserving encoding of v, read as type t.
func AppendValue(dst []byte, t Type, v any) ([]byte, error) {
	// The forms values usually come in are encoded without Normalize,
	// whose boxing into an interface allocates for most numbers.
	switch x := v.(type) {
	case string:
		if t == String {
			return appendEscaped(dst, x), nil
		}
	case int64:
		if t == Int64 || t == Timestamp {
			return binary.BigEndian.AppendUint64(dst, uint64(x)^signFlip64), nil
		}
	case int32:
		if t == Int32 {
			return binary.BigEndian.AppendUint32(dst, uint32(x)^signFlip32), nil
		}
	}
	nv, err := Normalize(t, v)
	if err != nil {
		return dst, err
	}
	switch t {
	case String:
		return appendEscaped(dst, nv.(string)), nil
	case Bytes:
		return appendEscaped(dst, nv.([]byte)), nil
	case Int32:
		return binary.BigEndian.AppendUint32(dst, uint32(nv.(int32))^signFlip32), nil
	case Int64, Timestamp:
		return binary.BigEndian.AppendUint64(dst, uint64(nv.(int64))^signFlip64), nil
	case Bool:
		if nv.(bool) {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case Float64:
		return binary.BigEndian.AppendUint64(dst, floatKey(nv.(float64))), nil
	}
	return dst, fmt.Errorf("no encoding for type %v", t)
}

// floatKey maps a float's bits so that unsigned order is numeric order:
// negatives have every bit flipped, positives only the sign bit.
func floatKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b&signFlip64 != 0 {
		return ^b
	}
	return b ^ signFlip64
}

func floatFromKey(k uint64) float64 {
	if k&signFlip64 != 0 {
		return math.Float64frombits(k ^ signFlip64)
	}
	return math.Float64frombits(^k)
}

func appendEscaped[T string | []byte](dst []byte, b T) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == escByte {
			dst = append(dst, escByte, escZero)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, escByte, escTerm)
}

// DecodeValue reads one value of type t from the front of b and returns it
// in its canonical Go type (see Normalize) with the bytes that follow.
func DecodeValue(t Type, b []byte) (v any, rest []byte, err error) {
	if w := t.FixedWidth(); w > 0 && len(b) < w {
		return nil, nil, fmt.Errorf("%w: %v needs %d bytes, %d left", ErrCorrupt, t, w, len(b))
	}
	switch t {
	case String, Bytes:
		raw, rest, err := readEscaped(b)
		if err != nil {
			return nil, nil, err
		}
		if t == String {
			return string(raw), rest, nil
		}
		return raw, rest, nil
	case Int32:
		return int32(binary.BigEndian.Uint32(b) ^ signFlip32), b[4:], nil
	case Int64, Timestamp:
		return int64(binary.BigEndian.Uint64(b) ^ signFlip64), b[8:], nil
	case Bool:
		switch b[0] {
		case 0:
			return false, b[1:], nil
		case 1:
			return true, b[1:], nil
		}
		return nil, nil, fmt.Errorf("%w: bool byte 0x%02x", ErrCorrupt, b[0])
	case Float64:
		f := floatFromKey(binary.BigEndian.Uint64(b))
		if math.IsNaN(f) {
			return nil, nil, fmt.Errorf("%w: NaN float", ErrCorrupt)
		}
		if f == 0 && math.Signbit(f) {
			// Encoding folds -0 into +0, so these bytes were not written by it.
			return nil, nil, fmt.Errorf("%w: negative zero float", ErrCorrupt)
		}
		return f, b[8:], nil
	}
	return nil, nil, fmt.Errorf("%w: no decoding for type %v", ErrCorrupt, t)
}

func readEscaped(b []byte) (raw, rest []byte, err error) {
	// Most values hold no zero byte: return them without copying twice.
	if i := bytes.IndexByte(b, escByte); i >= 0 && i+1 < len(b) && b[i+1] == escTerm {
		return append([]byte(nil), b[:i]...), b[i+2:], nil
	}
	out := make([]byte, 0, 16)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != escByte {
			out = append(out, c)
			continue
		}
		if i+1 >= len(b) {
			return nil, nil, fmt.Errorf("%w: string ends inside an escape", ErrCorrupt)
		}
		switch b[i+1] {
		case escTerm:
			return out, b[i+2:], nil
		case escZero:
			out = append(out, 0)
			i++
		default:
			return nil, nil, fmt.Errorf("%w: bad escape 0x00 0x%02x", ErrCorrupt, b[i+1])
		}
		if len(out) > maxStrBytes {
			return nil, nil, fmt.Errorf("%w: string part over %d bytes", ErrCorrupt, maxStrBytes)
		}
	}
	return nil, nil, fmt.Errorf("%w: string part has no terminator", ErrCorrupt)
}
