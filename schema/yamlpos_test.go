package schema

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// syntaxError parses doc and returns its one error, which must be a YAML
// syntax error.
func syntaxError(t testing.TB, doc string) *Error {
	t.Helper()
	_, err := Parse("s.yaml", []byte(doc))
	var es Errors
	if !errors.As(err, &es) || len(es) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	return es[0]
}

// The cases the YAML library placed at the start of the enclosing block.
func TestSyntaxErrorsNameTheOffendingLine(t *testing.T) {
	pad := strings.Repeat("    # filler\n", 40)
	for _, tc := range []struct {
		name      string
		doc       string
		line, col int
	}{
		{"unclosed {", "name: x\nentities:\n  order:\n    key: k\n    fields:\n      k: {type: string, size: 8\n      v: int64\n", 6, 32},
		{"unclosed [", "name: x\ntables:\n  t:\n    rowkey: [a, b\n    role: primary\n", 4, 18},
		{"bad indentation", "name: x\nentities:\n  order:\n    key: k\n    fields:\n      k: string\n      v: int64\n    children:\n       items: {}\n     bad: 1\n", 10, 6},
		{"deeper line", "name: x\nentities:\n  order:\n    key: k\n" + pad + "    version: v\n      fields: {}\n", 46, 13},
		{"tab", "name: x\nentities:\n  order:\n    key: k\n" + strings.Repeat("    # c\n", 15) + "\tversion: v\n", 20, 1},
		{"two values", "name: a: b\n", 1, 8},
	} {
		e := syntaxError(t, tc.doc)
		if e.Line != tc.line || e.Column != tc.col {
			t.Errorf("%s: reported %d:%d (%s), want %d:%d", tc.name, e.Line, e.Column, e.Msg, tc.line, tc.col)
		}
		if !strings.Contains(e.Msg, "YAML syntax") || !strings.HasPrefix(e.Error(), "s.yaml:") {
			t.Errorf("%s: message %q", tc.name, e.Error())
		}
	}
}

// Mistakes made on every line of a real schema are reported on that line
// in most cases; for some kinds in every case.
func TestSyntaxErrorsOnEveryLineOfAnExample(t *testing.T) {
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, m := range []struct {
		name string
		f    func(string) string
		want float64 // share of the cases reported on the mutated line
	}{
		{"drop }", func(l string) string { return strings.Replace(l, "}", "", 1) }, 1},
		{"drop ]", func(l string) string { return strings.Replace(l, "]", "", 1) }, 0.9},
		{"tab", func(l string) string { return "\t" + strings.TrimLeft(l, " ") }, 1},
		{"bad character", func(l string) string { return l + " @x" }, 1},
		{"one space less", func(l string) string { return strings.TrimPrefix(l, " ") }, 0.8},
		{"one space more", func(l string) string { return " " + l }, 0.75},
	} {
		hits, total := 0, 0
		for i, l := range lines {
			nl := m.f(l)
			if t := strings.TrimSpace(l); nl == l || t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			doc := strings.Join(append(append(append([]string{}, lines[:i]...), nl), lines[i+1:]...), "\n")
			_, err := Parse("x.yaml", []byte(doc))
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 || !strings.Contains(es[0].Msg, "YAML syntax") {
				continue // still valid YAML: a schema error, not a syntax error
			}
			total++
			if es[0].Line == i+1 {
				hits++
			}
		}
		if total == 0 || float64(hits) < m.want*float64(total) {
			t.Errorf("%s: %d of %d syntax errors reported on their line, want %.0f%%", m.name, hits, total, 100*m.want)
		}
	}
}

// Whatever the file, a syntax error's position is inside it.
func FuzzSyntaxErrorPosition(f *testing.F) {
	for _, name := range []string{"../examples/orders.yaml", "../examples/device_events.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add([]byte(strings.Replace(string(b), "}", "", 1)))
		f.Add([]byte(strings.Replace(string(b), "\n  ", "\n\t", 3)))
	}
	f.Add([]byte("a: {b: [\n"))
	f.Add([]byte("a: b: c\n  d: e\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("f.yaml", data)
		var es Errors
		if err == nil || !errors.As(err, &es) {
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, e := range es {
			if e.Line < 0 || e.Line > lines+1 || e.Column < 0 {
				t.Fatalf("position %d:%d outside a file of %d lines: %v", e.Line, e.Column, lines, e)
			}
		}
	})
}
