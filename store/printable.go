package store

import (
	"fmt"
	"strings"
)

// Printable renders bytes the way the HBase shell does
// (Bytes.toStringBinary): printable ASCII as itself, everything else as \xNN.
func Printable(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= ' ' && c <= '~' && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "\\x%02X", c)
		}
	}
	return sb.String()
}

// ParsePrintable is the inverse of Printable: it turns \xNN escapes back into
// bytes and leaves every other character as it is.
func ParsePrintable(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == 'x' {
			if i+4 > len(s) {
				return nil, fmt.Errorf("incomplete escape at byte %d of %q", i, s)
			}
			var v byte
			if _, err := fmt.Sscanf(s[i+2:i+4], "%02X", &v); err != nil {
				return nil, fmt.Errorf("bad escape %q at byte %d: want \\xNN", s[i:i+4], i)
			}
			out = append(out, v)
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out, nil
}
