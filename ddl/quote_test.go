package ddl

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// unquoteRuby reads back a double-quoted literal the way the HBase shell's
// Ruby would, for the escapes Quote produces; anything else is an error so
// that the round trip checks Quote emits nothing unexpected.
func unquoteRuby(s string) ([]byte, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, fmt.Errorf("not a double-quoted literal: %q", s)
	}
	s = s[1 : len(s)-1]
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return nil, fmt.Errorf("unescaped quote at %d", i)
		case c == '#' && (i == 0 || s[i-1] != '\\'):
			return nil, fmt.Errorf("unescaped # at %d", i)
		case c < ' ' || c > '~':
			return nil, fmt.Errorf("raw non-printable byte at %d", i)
		case c != '\\':
			out = append(out, c)
		case i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '"' || s[i+1] == '#'):
			out = append(out, s[i+1])
			i++
		case i+3 < len(s) && s[i+1] == 'x':
			v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("bad hex escape at %d: %w", i, err)
			}
			out = append(out, byte(v))
			i += 3
		default:
			return nil, fmt.Errorf("unknown escape at %d", i)
		}
	}
	return out, nil
}

func TestQuote(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte{0x01}, `"\x01"`},
		{[]byte{0x00, 0xFF}, `"\x00\xFF"`},
		{[]byte("abc"), `"abc"`},
		{[]byte(`a"b\c#{x}`), `"a\"b\\c\#{x}"`},
		{nil, `""`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzQuote(f *testing.F) {
	f.Add([]byte{0x01})
	f.Add([]byte(`"#{\`))
	f.Add([]byte("orders\x7f\x80"))
	f.Fuzz(func(t *testing.T, b []byte) {
		q := Quote(b)
		back, err := unquoteRuby(q)
		if err != nil {
			t.Fatalf("Quote(%q) = %s, which does not read back: %v", b, q, err)
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("round trip: %q -> %s -> %q", b, q, back)
		}
	})
}
