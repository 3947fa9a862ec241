package schema

import (
	"errors"
	"fmt"
	"strings"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// syntaxPosition finds where a YAML syntax error is. The YAML library that
// builds the nodes reports the line where the enclosing block starts (its
// context mark), which can be dozens of lines above the mistake; a second
// parser, used only on files the first refused, reports the offending
// token's line and column. ok is false when the second parser finds no
// syntax error (the two disagree, or the problem is not one of syntax, such
// as an unknown anchor): the caller keeps the first parser's report.
func syntaxPosition(data []byte) (line, col int, msg string, ok bool) {
	defer func() {
		// Outside code on hostile input: a crash here must not hide the
		// error the file already has.
		if recover() != nil {
			line, col, msg, ok = 0, 0, "", false
		}
	}()
	_, err := parser.ParseBytes(data, 0)
	var se *goccy.SyntaxError
	if err == nil || !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return 0, 0, "", false
	}
	p := se.Token.Position
	if p.Line <= 0 {
		return 0, 0, "", false
	}
	line, col = refine(data, se.Message, p.Line, max(p.Column, 1))
	return line, col, fmt.Sprintf("YAML syntax: %s", se.Message), true
}

// refine moves two reports of the second parser to where the mistake is.
// A flow collection left open ("',' or '}' must be specified") is found at
// the first token of the next line; the mistake is at the end of the line
// before. A mapping value where none may be ("a: b: c", or a line indented
// deeper than the key above it) is found at the scalar before it; the
// mistake is the ':' that follows.
func refine(data []byte, msg string, line, col int) (int, int) {
	lines := strings.Split(string(data), "\n")
	if line > len(lines) {
		return line, col
	}
	text := []rune(lines[line-1])
	switch {
	case strings.Contains(msg, "must be specified"):
		if col-1 > len(text) || strings.TrimSpace(string(text[:col-1])) != "" {
			return line, col // not the first token on its line
		}
		for l := line - 1; l >= 1; l-- {
			prev := strings.TrimRight(lines[l-1], " \t\r")
			if t := strings.TrimSpace(prev); t != "" && !strings.HasPrefix(t, "#") {
				return l, len([]rune(prev)) + 1
			}
		}
		return line, col
	case strings.Contains(msg, "mapping value is not allowed"):
		if c := valueColon(text, col); c > 0 {
			return line, c
		}
		// The scalar ends its line and is a value: the next line, indented
		// deeper, was read as its continuation up to its ':'. That line is
		// the mistake, unless it lines up with the line above the scalar's:
		// then the scalar's line is the one out of step.
		if col-1 <= len(text) && strings.Contains(string(text[:col-1]), ": ") && line < len(lines) &&
			indent(lines[line]) > indent(lines[line-1]) && indent(lines[line]) != indent(prevContent(lines, line-1)) {
			if c := valueColon([]rune(lines[line]), 1); c > 0 {
				return line + 1, c
			}
		}
	}
	return line, col
}

// valueColon is the column of the first ':' at or after col that starts a
// mapping value (followed by a space or the end of the line); 0 if none.
func valueColon(r []rune, col int) int {
	for i := max(col-1, 0); i < len(r); i++ {
		if r[i] == ':' && (i+1 == len(r) || r[i+1] == ' ' || r[i+1] == '\t' || r[i+1] == '\r') {
			return i + 1
		}
	}
	return 0
}

func indent(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// prevContent is the last line before line (1-based) that is neither blank
// nor a comment; "" if none.
func prevContent(lines []string, line int) string {
	for l := line - 1; l >= 1; l-- {
		if t := strings.TrimSpace(lines[l-1]); t != "" && !strings.HasPrefix(t, "#") {
			return lines[l-1]
		}
	}
	return ""
}
