package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// Error says why an event was refused, naming the field at fault (a JSON
// path such as "state.items[3].quantity"; empty when the line as a whole is
// wrong).
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func fieldErr(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// MaxLineBytes bounds one event line; a longer line is refused before it is
// parsed (a cell can hold at most 10 MiB anyway).
const MaxLineBytes = 64 << 20

// raw mirrors the wire format before validation.
type raw struct {
	ID      *string         `json:"id"`
	Entity  *string         `json:"entity"`
	Key     json.RawMessage `json:"key"`
	Version json.RawMessage `json:"version"`
	Op      *string         `json:"op"`
	State   json.RawMessage `json:"state"`
	Hints   json.RawMessage `json:"hints"`
}

// Decode parses and validates one event line against the plan. Every
// failure is an *Error naming the field.
func Decode(plan *schema.Plan, line []byte) (*Event, error) {
	line, err := checkLine(line)
	if err != nil {
		return nil, err
	}
	if ev, ok := fastDecode(plan, line); ok {
		return ev, nil
	}
	return decodeFull(plan, line)
}

// checkLine trims a line and refuses what neither decoder may see: an empty
// line, one over the limit, bytes that are not UTF-8.
func checkLine(line []byte) ([]byte, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, &Error{Reason: "empty line"}
	}
	if len(line) > MaxLineBytes {
		// The reader cuts a long line just past the limit, so its length
		// here says nothing about the line's real size: name the limit.
		return nil, &Error{Reason: fmt.Sprintf("line is over %d MiB, the limit of one event", MaxLineBytes>>20)}
	}
	// encoding/json turns bytes that are not UTF-8 into U+FFFD without a
	// word: a key or a value would silently become another one.
	if !utf8.Valid(line) {
		return nil, &Error{Reason: fmt.Sprintf("invalid UTF-8 at byte %d: events are UTF-8 JSON (send binary values as base64 bytes fields)", invalidUTF8At(line))}
	}
	return line, nil
}

// decodeFull is Decode by encoding/json, for every line fastDecode leaves
// to it; line is trimmed, non-empty, within the limit and valid UTF-8.
func decodeFull(plan *schema.Plan, line []byte) (*Event, error) {
	var r raw
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return nil, jsonErr(err)
	}
	if dec.More() {
		return nil, &Error{Reason: "more than one JSON value on the line"}
	}

	ev := &Event{}
	if r.ID != nil {
		ev.ID = *r.ID
	}
	if r.Entity == nil || *r.Entity == "" {
		return nil, fieldErr("entity", "missing")
	}
	ev.Entity = *r.Entity
	ent := plan.Entity(ev.Entity)
	if ent == nil {
		return nil, fieldErr("entity", "unknown entity %q", ev.Entity)
	}

	v, err := decodeVersion(r.Version)
	if err != nil {
		return nil, err
	}
	ev.Version = v

	ev.Op = Upsert
	if r.Op != nil {
		switch Op(*r.Op) {
		case Upsert, Delete:
			ev.Op = Op(*r.Op)
		default:
			return nil, fieldErr("op", "%q is not upsert or delete", *r.Op)
		}
	}

	if ev.Key, err = decodeKey(ent, r.Key); err != nil {
		return nil, err
	}

	switch ev.Op {
	case Upsert:
		if len(r.State) == 0 || string(r.State) == "null" {
			return nil, fieldErr("state", "missing: an upsert carries the full new state")
		}
		if ev.State, err = decodeState(ent, r.State); err != nil {
			return nil, err
		}
		for _, k := range ent.Key {
			sv, ok := ev.State[k]
			if !ok {
				return nil, fieldErr("state."+k, "missing: the key field must be in the state")
			}
			if !sameScalar(sv, ev.Key[k]) {
				return nil, fieldErr("state."+k, "%s does not match the event key %s", formatScalar(sv), formatScalar(ev.Key[k]))
			}
		}
	case Delete:
		if len(r.State) > 0 && string(r.State) != "null" {
			return nil, fieldErr("state", "a delete carries no state")
		}
	}

	if len(r.Hints) > 0 && string(r.Hints) != "null" {
		if ev.Hints, err = decodeHints(ent, r.Hints); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

func jsonErr(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &Error{Reason: fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, err)}
	case errors.As(err, &te) && te.Field == "":
		return &Error{Reason: "an event is a JSON object, got JSON " + te.Value}
	case errors.As(err, &te):
		return &Error{Field: te.Field, Reason: fmt.Sprintf("want %v, got JSON %s", te.Type, te.Value)}
	}
	// DisallowUnknownFields reports `json: unknown field "x"`.
	return &Error{Reason: "malformed event: " + err.Error()}
}

func decodeVersion(b json.RawMessage) (int64, error) {
	if len(b) == 0 || string(b) == "null" {
		return 0, fieldErr("version", "missing")
	}
	// json.Number takes a quoted number too; a version is a JSON integer,
	// and one sent as a string is a producer bug to report, not to guess at.
	if b[0] == '"' {
		return 0, fieldErr("version", "want a JSON integer, got the string %s", b)
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return 0, fieldErr("version", "want an integer, got %s", b)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, fieldErr("version", "want an integer, got %s", n)
	}
	// Version v writes deletes at v-1, and HBase timestamps are >= 0; the
	// top value is HBase's "latest" sentinel.
	if v < 1 || v == math.MaxInt64 {
		return 0, fieldErr("version", "%d is out of range: want 1 to 2^63-2", v)
	}
	return v, nil
}

// invalidUTF8At returns the offset of the first byte that does not start a
// valid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func decodeKey(ent *schema.Entity, b json.RawMessage) (map[string]any, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, fieldErr("key", "missing")
	}
	key := map[string]any{}
	if b[0] != '{' {
		if len(ent.Key) != 1 {
			return nil, fieldErr("key", "entity %s has a key of %d fields; give an object", ent.Name, len(ent.Key))
		}
		v, err := scalar(ent.Field(ent.Key[0]), b, "key")
		if err != nil {
			return nil, err
		}
		key[ent.Key[0]] = v
		return key, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fieldErr("key", "want a value or an object, got %s", b)
	}
	for _, k := range ent.Key {
		rv, ok := obj[k]
		if !ok {
			return nil, fieldErr("key."+k, "missing")
		}
		v, err := scalar(ent.Field(k), rv, "key."+k)
		if err != nil {
			return nil, err
		}
		key[k] = v
	}
	for k := range obj {
		if _, ok := key[k]; !ok {
			return nil, fieldErr("key."+k, "not a key field of %s", ent.Name)
		}
	}
	return key, nil
}

func decodeState(ent *schema.Entity, b json.RawMessage) (map[string]any, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fieldErr("state", "want an object, got %s", abbreviate(b))
	}
	state := make(map[string]any, len(obj))
	for _, name := range sortedKeys(obj) {
		rv := obj[name]
		if string(rv) == "null" {
			continue // an absent value
		}
		if f := ent.Field(name); f != nil && f.Child == "" {
			v, err := scalar(f, rv, "state."+name)
			if err != nil {
				return nil, err
			}
			state[name] = v
			continue
		}
		if c := ent.Child(name); c != nil {
			list, err := decodeChildren(c, rv, "state."+name)
			if err != nil {
				return nil, err
			}
			state[name] = list
			continue
		}
		return nil, fieldErr("state."+name, "entity %s has no field or child list %q", ent.Name, name)
	}
	return state, nil
}

func decodeChildren(c *schema.Child, b json.RawMessage, path string) ([]map[string]any, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil {
		return nil, fieldErr(path, "want a list, got %s", abbreviate(b))
	}
	if c.Max > 0 && len(elems) > c.Max {
		return nil, fieldErr(path, "%d elements, over the declared maximum of %d", len(elems), c.Max)
	}
	out := make([]map[string]any, 0, len(elems))
	seen := map[string]int{}
	for i, eb := range elems {
		ep := fmt.Sprintf("%s[%d]", path, i)
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(eb, &obj); err != nil {
			return nil, fieldErr(ep, "want an object, got %s", abbreviate(eb))
		}
		m := make(map[string]any, len(obj))
		for _, name := range sortedKeys(obj) {
			rv := obj[name]
			f := c.Field(name)
			if f == nil {
				return nil, fieldErr(ep+"."+name, "child list %s has no field %q", c.Name, name)
			}
			if string(rv) == "null" {
				continue
			}
			v, err := scalar(f, rv, ep+"."+name)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		kv, ok := m[c.Key]
		if !ok {
			return nil, fieldErr(ep+"."+c.Key, "missing: the key of each %s element", c.Name)
		}
		ks := formatScalar(kv)
		if j, dup := seen[ks]; dup {
			return nil, fieldErr(ep+"."+c.Key, "%s repeats the key of element %d", ks, j)
		}
		seen[ks] = i
		out = append(out, m)
	}
	return out, nil
}

func decodeHints(ent *schema.Entity, b json.RawMessage) (map[string]any, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fieldErr("hints", "want an object, got %s", abbreviate(b))
	}
	hints := make(map[string]any, len(obj))
	for _, name := range sortedKeys(obj) {
		f := ent.Field(name)
		if f == nil || f.Child != "" {
			return nil, fieldErr("hints."+name, "entity %s has no field %q", ent.Name, name)
		}
		if string(obj[name]) == "null" {
			hints[name] = nil // explicitly absent before
			continue
		}
		v, err := scalar(f, obj[name], "hints."+name)
		if err != nil {
			return nil, err
		}
		hints[name] = v
	}
	return hints, nil
}

// scalar decodes one JSON value as the field's type.
func scalar(f *schema.Field, b json.RawMessage, path string) (any, error) {
	v, err := rawScalar(b)
	if err != nil {
		return nil, fieldErr(path, "malformed value %s", abbreviate(b))
	}
	switch v.(type) {
	case map[string]any, []any:
		return nil, fieldErr(path, "want %v, got %s", f.Type, abbreviate(b))
	}
	if f.Type == rowkey.Bytes {
		// Bytes travel as base64 strings in JSON.
		var bs []byte
		if err := json.Unmarshal(b, &bs); err != nil {
			return nil, fieldErr(path, "want base64 bytes, got %s", abbreviate(b))
		}
		return bs, nil
	}
	nv, err := rowkey.Normalize(f.Type, v)
	if err != nil {
		return nil, fieldErr(path, "want %v: %v", f.Type, err)
	}
	return nv, nil
}

// rawScalar decodes one JSON value as unmarshalNumber into an any would
// (numbers as json.Number), without a decoder for each value: the value is
// part of a line the decoder has parsed already, so it is well-formed, and a
// number's text is its json.Number. Strings, objects and arrays take
// encoding/json.
func rawScalar(b []byte) (any, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("no value")
	}
	switch c := b[0]; {
	case c == '-' || (c >= '0' && c <= '9'):
		if !json.Valid(b) {
			return nil, fmt.Errorf("malformed number")
		}
		return json.Number(b), nil
	case string(b) == "true":
		return true, nil
	case string(b) == "false":
		return false, nil
	case string(b) == "null":
		return nil, nil
	case c == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return s, nil
	}
	var v any
	if err := unmarshalNumber(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// unmarshalNumber decodes b into v with numbers as json.Number. Objects and
// arrays of raw values need no decoder (json.Unmarshal): their values stay
// raw until scalar reads them.
func unmarshalNumber(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func abbreviate(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

func formatScalar(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []byte:
		return fmt.Sprintf("%x", x)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

func sameScalar(a, b any) bool {
	if ab, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && bytes.Equal(ab, bb)
	}
	return a == b
}
