package ddl

import (
	"fmt"
	"strings"
)

// Quote renders bytes as a double-quoted string literal of the HBase shell
// (JRuby): printable ASCII as itself, everything else as \xNN. Backslash,
// double quote and # are escaped too, the last because "#{" would start
// Ruby string interpolation.
func Quote(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + 2)
	sb.WriteByte('"')
	for _, c := range b {
		switch {
		case c == '\\' || c == '"' || c == '#':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c >= ' ' && c <= '~':
			sb.WriteByte(c)
		default:
			fmt.Fprintf(&sb, "\\x%02X", c)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// QuoteString is Quote for text (table, family and setting names).
func QuoteString(s string) string { return Quote([]byte(s)) }
