package event

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// fastDecode decodes a well-formed, valid event line in one pass over its
// bytes. The full decoder parses a line four times over (the line, the
// state, each child list, each element) through reflection, and took as
// long per event as the writer's whole apply.
//
// Invariant: when ok is true, the event is exactly what the full decoder
// returns for the line (FuzzDecodeFast holds the two to it). Anything this
// pass does not take on, and every invalid line, returns ok false and goes
// to the full decoder, so that the errors a producer sees are its alone:
// field names matched other than exactly, repeated names, bytes fields,
// surrogate escapes, and every error.
//
// line is trimmed, non-empty, within MaxLineBytes and valid UTF-8.
func fastDecode(plan *schema.Plan, line []byte) (ev *Event, ok bool) {
	p := &parser{b: line}
	ev = &Event{Op: Upsert}
	var key, version, state, hints span
	ok = p.members(func(name []byte) bool {
		switch string(name) {
		case "id":
			if p.null() {
				return true
			}
			s, ok := p.str()
			ev.ID = s
			return ok
		case "entity":
			s, ok := p.str()
			ev.Entity = s
			return ok
		case "op":
			if p.null() {
				return true // the default, upsert
			}
			op, ok := p.str()
			ev.Op = Op(op)
			return ok && (ev.Op == Upsert || ev.Op == Delete)
		case "key":
			key = p.value()
		case "version":
			version = p.value()
		case "state":
			state = p.value()
		case "hints":
			hints = p.value()
		default:
			return false
		}
		return !p.failed
	})
	if !ok || !p.end() {
		return nil, false
	}
	ent := plan.Entity(ev.Entity)
	if ent == nil || key.none() || version.none() {
		return nil, false
	}
	if ev.Version, ok = fastVersion(line[version.from:version.to]); !ok {
		return nil, false
	}
	if ev.Key, ok = fastKey(ent, p.sub(key)); !ok {
		return nil, false
	}
	switch ev.Op {
	case Upsert:
		if state.none() || state.null(line) {
			return nil, false
		}
		if ev.State, ok = fastState(ent, p.sub(state)); !ok {
			return nil, false
		}
		for _, k := range ent.Key {
			if sv, ok := ev.State[k]; !ok || !sameScalar(sv, ev.Key[k]) {
				return nil, false
			}
		}
	case Delete:
		if !state.none() && !state.null(line) {
			return nil, false
		}
	}
	if !hints.none() && !hints.null(line) {
		if ev.Hints, ok = fastHints(ent, p.sub(hints)); !ok {
			return nil, false
		}
	}
	return ev, true
}

// span is where a value lies in the line; the zero span, that it is absent
// (a value never ends at 0: the line starts with '{').
type span struct{ from, to int }

func (s span) none() bool { return s.to == 0 }

func (s span) null(line []byte) bool { return string(line[s.from:s.to]) == "null" }

// parser reads JSON from b at i. A method that finds what it does not
// expect returns false (or sets failed) and leaves i anywhere: the caller
// gives up on the line.
type parser struct {
	b      []byte
	i      int
	failed bool
}

func (p *parser) sub(s span) *parser { return &parser{b: p.b[:s.to], i: s.from} }

func (p *parser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte skips space and then c, if c is next.
func (p *parser) byte(c byte) bool {
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) literal(s string) bool {
	p.skipSpace()
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// name reads an object member's name without copying it: a name with an
// escape is left to the full decoder.
func (p *parser) name() ([]byte, bool) {
	p.skipSpace()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a JSON string.
func (p *parser) str() (string, bool) {
	p.skipSpace()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return string(p.b[start:j]), true
		case c == '\\':
			return p.escaped(start, j)
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// escaped reads the rest of a string whose bytes start at start and whose
// first escape is at j.
func (p *parser) escaped(start, j int) (string, bool) {
	out := append(make([]byte, 0, j-start+16), p.b[start:j]...)
	for j < len(p.b) {
		c := p.b[j]
		switch {
		case c == '"':
			p.i = j + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(p.b) {
			return "", false
		}
		switch e := p.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+6 > len(p.b) {
				return "", false
			}
			r, err := strconv.ParseUint(string(p.b[j+2:j+6]), 16, 32)
			// A surrogate (a pair, or one alone, which encoding/json
			// replaces) is left to the full decoder.
			if err != nil || (r >= 0xD800 && r < 0xE000) {
				return "", false
			}
			out = utf8.AppendRune(out, rune(r))
			j += 6
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// value skips one JSON value, checking its grammar, and returns where it
// lies.
func (p *parser) value() span {
	p.skipSpace()
	from := p.i
	if !p.skip(0) {
		p.failed = true
		return span{}
	}
	return span{from, p.i}
}

// maxDepth bounds the nesting skip follows: an event's values nest three
// deep (state, a child list, an element); deeper ones go to the full
// decoder.
const maxDepth = 8

func (p *parser) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	p.skipSpace()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, ok := p.rawString()
		return ok
	case c == '{':
		p.i++
		if p.byte('}') {
			return true
		}
		for {
			if _, ok := p.rawString(); !ok || !p.byte(':') || !p.skip(depth+1) {
				return false
			}
			if p.byte('}') {
				return true
			}
			if !p.byte(',') {
				return false
			}
		}
	case c == '[':
		p.i++
		if p.byte(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.byte(']') {
				return true
			}
			if !p.byte(',') {
				return false
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		_, ok := p.number()
		return ok
	}
	return p.literal("true") || p.literal("false") || p.literal("null")
}

// rawString skips a string, escapes checked, and returns its bytes as
// written, quotes included.
func (p *parser) rawString() ([]byte, bool) {
	p.skipSpace()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i
	for j := start + 1; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:p.i], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if j+1 >= len(p.b) {
				return nil, false
			}
			switch p.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+6 > len(p.b) {
					return nil, false
				}
				for _, h := range p.b[j+2 : j+6] {
					if !isHex(h) {
						return nil, false
					}
				}
				j += 5
			default:
				return nil, false
			}
		}
	}
	return nil, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number reads a JSON number and returns its text.
func (p *parser) number() ([]byte, bool) {
	b, start := p.b, p.i
	j := start
	if j < len(b) && b[j] == '-' {
		j++
	}
	digits := func() bool {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j > k
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	p.i = j
	return b[start:j], true
}

// fastVersion is decodeVersion for a well-formed value: ParseInt refuses
// all but an integer's text (a string, a literal, a fraction, an exponent).
func fastVersion(b []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || v < 1 || v == math.MaxInt64 {
		return 0, false
	}
	return v, true
}

// scalar reads one value as the field's type, as the full decoder's
// scalar does.
func (p *parser) scalar(f *schema.Field) (any, bool) {
	if f.Type == rowkey.Bytes {
		return nil, false
	}
	p.skipSpace()
	if p.i >= len(p.b) {
		return nil, false
	}
	var v any
	switch c := p.b[p.i]; {
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		v = s
	case c == '-' || (c >= '0' && c <= '9'):
		n, ok := p.number()
		if !ok {
			return nil, false
		}
		switch f.Type {
		case rowkey.Int64, rowkey.Timestamp, rowkey.Int32:
			// What Normalize does with the json.Number, without boxing
			// the number's text first.
			x, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				return nil, false
			}
			if f.Type != rowkey.Int32 {
				return x, true
			}
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, false
			}
			return int32(x), true
		}
		v = json.Number(n)
	case p.literal("true"):
		v = true
	case p.literal("false"):
		v = false
	default:
		return nil, false // null, an object or a list: an error or absent
	}
	nv, err := rowkey.Normalize(f.Type, v)
	if err != nil {
		return nil, false
	}
	return nv, true
}

// members calls fn for each member of the object p is at, with p placed at
// the member's value; fn reads the value. A repeated name fails: the full
// decoder keeps the last, and says nothing.
func (p *parser) members(fn func(name []byte) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	var room [16][]byte
	names := room[:0]
	for {
		name, ok := p.name()
		if !ok || !p.byte(':') {
			return false
		}
		for _, n := range names {
			if string(n) == string(name) {
				return false
			}
		}
		names = append(names, name)
		if !fn(name) {
			return false
		}
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

// null reads a null, if one is next.
func (p *parser) null() bool { return p.literal("null") }

func fastKey(ent *schema.Entity, p *parser) (map[string]any, bool) {
	key := make(map[string]any, len(ent.Key))
	if p.skipSpace(); p.i < len(p.b) && p.b[p.i] != '{' {
		if len(ent.Key) != 1 {
			return nil, false
		}
		v, ok := p.scalar(ent.Field(ent.Key[0]))
		if !ok {
			return nil, false
		}
		key[ent.Key[0]] = v
		return key, p.end()
	}
	ok := p.members(func(name []byte) bool {
		isKey := false
		for _, k := range ent.Key {
			isKey = isKey || k == string(name)
		}
		if !isKey {
			return false
		}
		v, ok := p.scalar(ent.Field(string(name)))
		key[string(name)] = v
		return ok
	})
	return key, ok && len(key) == len(ent.Key) && p.end()
}

// end reports whether nothing but space is left.
func (p *parser) end() bool {
	p.skipSpace()
	return p.i == len(p.b)
}

func fastState(ent *schema.Entity, p *parser) (map[string]any, bool) {
	state := make(map[string]any, len(ent.Fields))
	ok := p.members(func(name []byte) bool {
		if p.null() {
			return true // absent, whatever the name
		}
		if f := ent.Field(string(name)); f != nil && f.Child == "" {
			v, ok := p.scalar(f)
			state[string(name)] = v
			return ok
		}
		if c := ent.Child(string(name)); c != nil {
			list, ok := fastChildren(c, p)
			state[string(name)] = list
			return ok
		}
		return false
	})
	return state, ok && p.end()
}

func fastChildren(c *schema.Child, p *parser) ([]map[string]any, bool) {
	if !p.byte('[') {
		return nil, false
	}
	out := make([]map[string]any, 0, 4)
	if p.byte(']') {
		return out, true
	}
	for {
		m := make(map[string]any, len(c.Fields))
		ok := p.members(func(name []byte) bool {
			f := c.Field(string(name))
			if f == nil {
				return false
			}
			if p.null() {
				return true
			}
			v, ok := p.scalar(f)
			m[string(name)] = v
			return ok
		})
		if !ok {
			return nil, false
		}
		kv, ok := m[c.Key]
		if !ok {
			return nil, false
		}
		for _, o := range out {
			if o[c.Key] == kv {
				return nil, false // a repeated key: the full decoder says which
			}
		}
		out = append(out, m)
		if c.Max > 0 && len(out) > c.Max {
			return nil, false
		}
		if p.byte(']') {
			return out, true
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

func fastHints(ent *schema.Entity, p *parser) (map[string]any, bool) {
	hints := map[string]any{}
	ok := p.members(func(name []byte) bool {
		f := ent.Field(string(name))
		if f == nil || f.Child != "" {
			return false
		}
		if p.null() {
			hints[string(name)] = nil
			return true
		}
		v, ok := p.scalar(f)
		hints[string(name)] = v
		return ok
	})
	return hints, ok && p.end()
}
