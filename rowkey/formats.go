package rowkey

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Key formats that tables built outside denorm use, so a schema can
// describe the table a team already has: text with delimiters
// (<epoch_millis>#<device_id>), fixed-width zero-padded numbers,
// bit-reversed sequences and hashes of several fields. Each decodes back
// to its value and refuses bytes that are not its canonical form.

// textValue renders a value as text: decimal integers, epoch milliseconds
// for timestamps, true/false, the shortest float that reads back, strings
// and bytes as they are.
func textValue(t Type, v any) (string, error) {
	nv, err := Normalize(t, v)
	if err != nil {
		return "", err
	}
	switch x := nv.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("no text form for %T", nv)
}

// parseText reads text back into a canonical value of type t, refusing
// any text that is not what textValue writes.
func parseText(t Type, s string) (any, error) {
	var v any
	var err error
	switch t {
	case String:
		return s, nil
	case Bytes:
		return []byte(s), nil
	case Int32:
		var n int64
		n, err = strconv.ParseInt(s, 10, 32)
		v = int32(n)
	case Int64, Timestamp:
		v, err = strconv.ParseInt(s, 10, 64)
	case Bool:
		v, err = strconv.ParseBool(s)
	case Float64:
		v, err = strconv.ParseFloat(s, 64)
	default:
		return nil, fmt.Errorf("%w: no text form for %v", ErrCorrupt, t)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a %v", ErrCorrupt, s, t)
	}
	if back, _ := textValue(t, v); back != s {
		return nil, fmt.Errorf("%w: %q is not the canonical text of a %v", ErrCorrupt, s, t)
	}
	return v, nil
}

// appendFormatted encodes text, pad and bitrev parts.
func appendFormatted(dst []byte, p *Part, v any) ([]byte, error) {
	switch p.Func {
	case Text:
		s, err := textValue(p.Type, v)
		if err != nil {
			return dst, err
		}
		if p.Delim != "" && strings.Contains(s, p.Delim) {
			return dst, fmt.Errorf("value %q holds the delimiter %q", s, p.Delim)
		}
		return append(append(dst, s...), p.Delim...), nil
	case Pad:
		n, err := int64Value(p.Type, v)
		if err != nil {
			return dst, err
		}
		if n < 0 {
			return dst, fmt.Errorf("pad of negative value %d", n)
		}
		s := strconv.FormatInt(n, 10)
		if len(s) > p.N {
			return dst, fmt.Errorf("value %d has more than %d digits", n, p.N)
		}
		for i := len(s); i < p.N; i++ {
			dst = append(dst, '0')
		}
		return append(append(dst, s...), p.Delim...), nil
	case BitReverse:
		n, err := int64Value(p.Type, v)
		if err != nil {
			return dst, err
		}
		if p.Type == Int32 {
			return binary.BigEndian.AppendUint32(dst, bits.Reverse32(uint32(int32(n)))), nil
		}
		return binary.BigEndian.AppendUint64(dst, bits.Reverse64(uint64(n))), nil
	}
	return dst, fmt.Errorf("unknown key function %v", p.Func)
}

// decodeFormatted reads text, pad and bitrev parts.
func decodeFormatted(p Part, b []byte) (any, []byte, error) {
	switch p.Func {
	case Text:
		if p.Delim == "" {
			v, err := parseText(p.Type, string(b))
			return v, nil, err
		}
		i := bytes.Index(b, []byte(p.Delim))
		if i < 0 {
			return nil, nil, fmt.Errorf("%w: no delimiter %q after the text", ErrCorrupt, p.Delim)
		}
		v, err := parseText(p.Type, string(b[:i]))
		return v, b[i+len(p.Delim):], err
	case Pad:
		if len(b) < p.N+len(p.Delim) {
			return nil, nil, fmt.Errorf("%w: pad needs %d digits, %d bytes left", ErrCorrupt, p.N, len(b))
		}
		digits := b[:p.N]
		for _, c := range digits {
			if c < '0' || c > '9' {
				return nil, nil, fmt.Errorf("%w: %q is not %d digits", ErrCorrupt, digits, p.N)
			}
		}
		if !bytes.HasPrefix(b[p.N:], []byte(p.Delim)) {
			return nil, nil, fmt.Errorf("%w: no delimiter %q after the digits", ErrCorrupt, p.Delim)
		}
		n, err := strconv.ParseUint(string(digits), 10, 64)
		if err != nil || n > math.MaxInt64 || (p.Type == Int32 && n > math.MaxInt32) {
			return nil, nil, fmt.Errorf("%w: %s out of range for %v", ErrCorrupt, digits, p.Type)
		}
		rest := b[p.N+len(p.Delim):]
		if p.Type == Int32 {
			return int32(n), rest, nil
		}
		return int64(n), rest, nil
	case BitReverse:
		if p.Type == Int32 {
			if len(b) < 4 {
				return nil, nil, fmt.Errorf("%w: bitrev needs 4 bytes, %d left", ErrCorrupt, len(b))
			}
			return int32(bits.Reverse32(binary.BigEndian.Uint32(b))), b[4:], nil
		}
		if len(b) < 8 {
			return nil, nil, fmt.Errorf("%w: bitrev needs 8 bytes, %d left", ErrCorrupt, len(b))
		}
		return int64(bits.Reverse64(binary.BigEndian.Uint64(b))), b[8:], nil
	}
	return nil, nil, fmt.Errorf("%w: unknown key function %v", ErrCorrupt, p.Func)
}

// appendMultiHash encodes a hash of several fields: the first N bytes of
// MD5 over the fields' order-preserving encodings, one after another.
// (Each encoding ends unambiguously, so ("ab", "c") and ("a", "bc") hash
// different bytes.)
// vals(k) is the value of the part's field k (Part.field).
func appendMultiHash(dst []byte, p *Part, vals func(k int) (any, bool)) ([]byte, error) {
	var buf [128]byte
	enc := buf[:0]
	for k := 0; k <= p.nMore; k++ {
		v, ok := vals(k)
		if !ok {
			return dst, fmt.Errorf("no value for %q", p.field(k))
		}
		var err error
		if enc, err = AppendValue(enc, p.fieldType(k), v); err != nil {
			return dst, fmt.Errorf("%s: %w", p.field(k), err)
		}
	}
	return append(dst, HashPrefix(enc, p.N)...), nil
}
