package rowkey

import "fmt"

// DecodePrefix reads the whole parts at the start of a key that may stop
// early: a lookup table's reference row, a split key, the start of a
// region. It returns the parts read and how many bytes follow the last of
// them (a part cut short is not read). Unlike Decode it checks no derived
// part against its field, since the field may lie past the end.
func (s *Spec) DecodePrefix(key []byte) (parts []Decoded, rest int, err error) {
	b := key
	for _, p := range s.parts {
		if len(b) == 0 {
			break
		}
		v, after, err := decodePart(p, b)
		if err != nil {
			if len(parts) == 0 {
				return nil, len(key), fmt.Errorf("rowkey: decoding part %q of %s: %w", p.Expr, s, err)
			}
			break
		}
		parts = append(parts, Decoded{Part: p, Value: v, Raw: b[:len(b)-len(after)]})
		b = after
	}
	return parts, len(b), nil
}
