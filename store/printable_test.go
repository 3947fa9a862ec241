package store

import (
	"bytes"
	"testing"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"a\x00b", `a\x00b`},
		{"\xff\\", `\xFF\x5C`},
		{"", ""},
	} {
		if got := Printable([]byte(c.in)); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
		back, err := ParsePrintable(c.want)
		if err != nil || string(back) != c.in {
			t.Errorf("ParsePrintable(%q) = %q, %v", c.want, back, err)
		}
	}
	for _, bad := range []string{`\x`, `\x4`, `\xZZ`} {
		if _, err := ParsePrintable(bad); err == nil {
			t.Errorf("ParsePrintable(%q) accepted", bad)
		}
	}
}

// Any bytes survive Printable then ParsePrintable, and ParsePrintable never
// panics on arbitrary text.
func FuzzPrintable(f *testing.F) {
	f.Add([]byte("c1\x00o1\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		back, err := ParsePrintable(Printable(b))
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("round trip of %x: %x, %v", b, back, err)
		}
		_, _ = ParsePrintable(string(b))
	})
}
