package layout

import (
	"encoding/binary"
	"fmt"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// An element record (one child of a wide row, in one cell) is compact, so
// that a cell costs about the sum of its fields' sizes, as the cost model
// assumes:
//
//	presence bitmap, ceil(fields/8) bytes, bit i set when field i is present
//	then each present field in schema order: fixed-width types as EncodeValue
//	gives them; strings and bytes as a uvarint length and the bytes.

// EncodeElement encodes one child element.
func EncodeElement(c *schema.Child, elem map[string]any) ([]byte, error) {
	return AppendElement(make([]byte, 0, 64), c, elem)
}

// AppendElement appends the encoding of one child element to dst.
func AppendElement(dst []byte, c *schema.Child, elem map[string]any) ([]byte, error) {
	n := len(c.Fields)
	bitmap := len(dst)
	for range (n + 7) / 8 {
		dst = append(dst, 0)
	}
	for i, f := range c.Fields {
		v, ok := elem[f.Name]
		if !ok || v == nil {
			continue
		}
		dst[bitmap+i/8] |= 1 << (i % 8)
		var err error
		switch s, isString := v.(string); {
		case f.Type.FixedWidth() > 0:
			dst, err = AppendValue(dst, f.Type, v)
		case isString && f.Type == rowkey.String:
			// The length is known before the bytes: no copy of its own.
			dst = append(binary.AppendUvarint(dst, uint64(len(s))), s...)
		default:
			var b []byte
			if b, err = EncodeValue(f.Type, v); err == nil {
				dst = append(binary.AppendUvarint(dst, uint64(len(b))), b...)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("layout: element of %s, field %s: %w", c.Name, f.Name, err)
		}
	}
	return dst, nil
}

// DecodeElement is the inverse of EncodeElement.
func DecodeElement(c *schema.Child, b []byte) (map[string]any, error) {
	elem := make(map[string]any, len(c.Fields))
	if err := decodeElementInto(c, b, elem); err != nil {
		return nil, err
	}
	return elem, nil
}

// decodeElementInto decodes an element record's fields into elem, which may
// already hold some (the child key, read from the qualifier).
func decodeElementInto(c *schema.Child, b []byte, elem map[string]any) error {
	n := len(c.Fields)
	nb := (n + 7) / 8
	if len(b) < nb {
		return fmt.Errorf("layout: element of %s: %d bytes, shorter than its bitmap", c.Name, len(b))
	}
	bitmap, rest := b[:nb], b[nb:]
	if n%8 != 0 && bitmap[nb-1]>>(n%8) != 0 {
		return fmt.Errorf("layout: element of %s: presence bits set past its %d fields", c.Name, n)
	}
	for i, f := range c.Fields {
		if bitmap[i/8]&(1<<(i%8)) == 0 {
			continue
		}
		w := f.Type.FixedWidth()
		if w <= 0 {
			l, k := binary.Uvarint(rest)
			if k <= 0 || uint64(len(rest)-k) < l || k != uvarintLen(l) {
				return fmt.Errorf("layout: element of %s, field %s: bad length", c.Name, f.Name)
			}
			rest = rest[k:]
			w = int(l)
		}
		if len(rest) < w {
			return fmt.Errorf("layout: element of %s, field %s: truncated", c.Name, f.Name)
		}
		v, err := DecodeValue(f.Type, rest[:w])
		if err != nil {
			return fmt.Errorf("layout: element of %s, field %s: %w", c.Name, f.Name, err)
		}
		elem[f.Name] = v
		rest = rest[w:]
	}
	if len(rest) != 0 {
		return fmt.Errorf("layout: element of %s: %d bytes after the last field", c.Name, len(rest))
	}
	return nil
}

// uvarintLen is the length of l's shortest uvarint encoding: a longer one
// would decode the same and let two records of one element differ.
func uvarintLen(l uint64) int {
	n := 1
	for ; l >= 0x80; l >>= 7 {
		n++
	}
	return n
}
