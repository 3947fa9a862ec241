package rowkey

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Format renders a key for people: its parts joined by "|", timestamps in
// RFC 3339, salts as "#n", hashes and bytes in hex, and strings quoted when
// they hold anything unprintable. A key that does not decode is shown as
// quoted bytes with a "?" in front.
func (s *Spec) Format(key []byte) string {
	parts, err := s.Decode(key)
	if err != nil {
		return "?" + strconv.Quote(string(key))
	}
	out := make([]string, len(parts))
	for i, d := range parts {
		out[i] = formatPart(d)
	}
	return strings.Join(out, "|")
}

func formatPart(d Decoded) string {
	switch d.Part.Func {
	case Salt:
		return fmt.Sprintf("#%d", d.Value)
	case Hash:
		return fmt.Sprintf("%x", d.Value)
	case Day:
		return time.UnixMilli(d.Value.(int64)).UTC().Format("2006-01-02")
	}
	switch v := d.Value.(type) {
	case string:
		if utf8.ValidString(v) && !strings.ContainsAny(v, "|\"") && v != "" && isPrintable(v) {
			return v
		}
		return strconv.Quote(v)
	case []byte:
		return fmt.Sprintf("0x%x", v)
	case int64:
		if d.Part.Type == Timestamp {
			return time.UnixMilli(v).UTC().Format(time.RFC3339Nano)
		}
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(d.Value)
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
