package rowkey

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Func is what a key part does with its field.
type Func int

const (
	// Plain encodes the field's value.
	Plain Func = iota
	// Reverse encodes math.MaxInt64 - value, so newer timestamps sort first.
	Reverse
	// Salt encodes one bucket byte: a stable hash of the field mod N.
	Salt
	// Hash encodes the first N bytes of a stable hash of the field.
	Hash
	// Day encodes the UTC day of a timestamp, as days since the epoch.
	Day
	// Text writes the value as text (decimal numbers, epoch milliseconds,
	// raw strings), optionally followed by a delimiter: the keys of tables
	// built by hand, such as <epoch_millis>#<device_id>.
	Text
	// Pad writes a non-negative integer as fixed-width zero-padded decimal.
	Pad
	// BitReverse writes an integer with its bits in reverse order, which
	// spreads a sequence over the key space while staying decodable.
	BitReverse
)

var funcNames = [...]string{Plain: "", Reverse: "reverse", Salt: "salt", Hash: "hash", Day: "day", Text: "text", Pad: "pad", BitReverse: "bitrev"}

func (f Func) String() string {
	if f == Plain {
		return "plain"
	}
	if f < 0 || int(f) >= len(funcNames) {
		return fmt.Sprintf("Func(%d)", int(f))
	}
	return funcNames[f]
}

// Limits on function arguments.
const (
	MaxSaltBuckets = 256 // one byte
	MaxHashBytes   = 16  // all of MD5
)

// Part is one element of a composite key.
type Part struct {
	Expr  string // as written in the schema, e.g. "salt(orderId, 8)"
	Func  Func
	Field string // the field the part is computed from, e.g. "orderId" or "items.sku"
	N     int    // Salt: number of buckets; Hash: number of bytes; Pad: digits; otherwise 0
	Type  Type   // the field's type; set before the part is used in a Spec
	// Delim is the delimiter text and pad parts end with ("" for none).
	Delim string
	// more holds the further fields of a hash of several fields, in order
	// (hash(section, author, 2)), and moreTypes their types. Arrays, not
	// slices, so that a Part stays comparable.
	more      [maxMore]string
	moreTypes [maxMore]Type
	nMore     int
}

// maxMore is how many fields a hash may read besides its first.
const maxMore = 7

// Fields lists every field the part reads: Field, then More.
func (p Part) Fields() []string {
	return append([]string{p.Field}, p.More()...)
}

// field is the part's field k, in the order of Fields: Field, then More.
func (p *Part) field(k int) string {
	if k == 0 {
		return p.Field
	}
	return p.more[k-1]
}

// fieldType is field k's type.
func (p *Part) fieldType(k int) Type {
	if k == 0 {
		return p.Type
	}
	return p.moreTypes[k-1]
}

// More lists the fields a hash of several fields reads after Field.
func (p Part) More() []string { return append([]string(nil), p.more[:p.nMore]...) }

// TypeMore types the further fields of a hash of several fields.
func (p *Part) TypeMore(typeOf func(field string) (Type, bool)) error {
	for i, f := range p.more[:p.nMore] {
		t, ok := typeOf(f)
		if !ok {
			return fmt.Errorf("key part %q: unknown field %q", p.Expr, f)
		}
		p.moreTypes[i] = t
	}
	return nil
}

// Recoverable reports whether the part's bytes give back its field's
// value.
func (p Part) Recoverable() bool {
	switch p.Func {
	case Plain, Reverse, Text, Pad, BitReverse:
		return true
	}
	return false
}

// Width is the encoded size of the part in bytes, or -1 when it depends on
// the value (strings and bytes: the value, escaped zeros, plus 2).
func (p Part) Width() int {
	switch p.Func {
	case Reverse:
		return 8
	case Salt:
		return 1
	case Hash:
		return p.N
	case Day:
		return 4
	case Pad:
		return p.N + len(p.Delim)
	case BitReverse:
		if p.Type == Int32 {
			return 4
		}
		return 8
	case Text:
		return -1
	}
	return p.Type.FixedWidth()
}

// Derived reports whether the part cannot be turned back into its field's
// value (salt, hash and day lose information).
func (p Part) Derived() bool { return p.Func == Salt || p.Func == Hash || p.Func == Day }

// String is the canonical expression.
func (p Part) String() string {
	switch p.Func {
	case Plain:
		return p.Field
	case Salt, Hash:
		return fmt.Sprintf("%s(%s, %d)", p.Func, strings.Join(p.Fields(), ", "), p.N)
	case Text:
		if p.Delim != "" {
			return fmt.Sprintf("text(%s, %s)", p.Field, p.Delim)
		}
	case Pad:
		if p.Delim != "" {
			return fmt.Sprintf("pad(%s, %d, %s)", p.Field, p.N, p.Delim)
		}
		return fmt.Sprintf("pad(%s, %d)", p.Field, p.N)
	}
	return fmt.Sprintf("%s(%s)", p.Func, p.Field)
}

// ParsePart reads one key expression: "field", "reverse(field)",
// "day(field)", "salt(field, n)" or "hash(field, n)". Field paths are
// identifiers joined by dots ("items.sku"). The returned Part has no Type
// yet.
func ParsePart(expr string) (Part, error) {
	s := strings.TrimSpace(expr)
	p := Part{Expr: expr}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if !validPath(s) {
			return p, fmt.Errorf("key part %q: not a field path or function call", expr)
		}
		p.Field = s
		return p, nil
	}
	if !strings.HasSuffix(s, ")") {
		return p, fmt.Errorf("key part %q: missing closing parenthesis", expr)
	}
	name := strings.TrimSpace(s[:open])
	args := strings.Split(s[open+1:len(s)-1], ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
	}
	switch name {
	case "reverse":
		p.Func = Reverse
	case "day":
		p.Func = Day
	case "salt":
		p.Func = Salt
	case "hash":
		p.Func = Hash
	case "text":
		p.Func = Text
	case "pad":
		p.Func = Pad
	case "bitrev", "bitreverse":
		p.Func = BitReverse
	default:
		return p, fmt.Errorf("key part %q: unknown function %q (want reverse, day, salt, hash, text, pad or bitrev)", expr, name)
	}
	if err := p.parseArgs(expr, name, args); err != nil {
		return p, err
	}
	return p, nil
}

// parseArgs reads a function's arguments: a field first; then a count for
// salt and hash (hash may hash several fields: every argument but the last
// is a field), a width for pad, and an optional delimiter for text and pad.
func (p *Part) parseArgs(expr, name string, args []string) error {
	minArgs, maxArgs := 1, 1
	switch p.Func {
	case Salt:
		minArgs, maxArgs = 2, 2
	case Hash:
		minArgs, maxArgs = 2, maxMore+2
	case Text:
		maxArgs = 2
	case Pad:
		minArgs, maxArgs = 2, 3
	}
	if len(args) < minArgs || len(args) > maxArgs {
		want := fmt.Sprint(minArgs)
		if maxArgs != minArgs {
			want = fmt.Sprintf("%d to %d", minArgs, maxArgs)
		}
		return fmt.Errorf("key part %q: %s takes %s argument(s), got %d", expr, name, want, len(args))
	}
	if !validPath(args[0]) {
		return fmt.Errorf("key part %q: %q is not a field path", expr, args[0])
	}
	p.Field = args[0]
	number := func(a string, lo, hi int) (int, error) {
		n, err := strconv.Atoi(a)
		if err != nil {
			return 0, fmt.Errorf("key part %q: %q is not a whole number", expr, a)
		}
		if n < lo || n > hi {
			return 0, fmt.Errorf("key part %q: %s wants 1 to %d, got %d", expr, name, hi, n)
		}
		return n, nil
	}
	var err error
	switch p.Func {
	case Salt:
		p.N, err = number(args[1], 1, MaxSaltBuckets)
	case Hash:
		for _, f := range args[1 : len(args)-1] {
			if !validPath(f) {
				return fmt.Errorf("key part %q: %q is not a field path", expr, f)
			}
			if f == p.Field || slices.Contains(p.More(), f) {
				return fmt.Errorf("key part %q: %q is hashed twice", expr, f)
			}
			p.more[p.nMore] = f
			p.nMore++
		}
		p.N, err = number(args[len(args)-1], 1, MaxHashBytes)
	case Text:
		if len(args) == 2 {
			p.Delim, err = parseDelim(expr, args[1])
		}
	case Pad:
		if p.N, err = number(args[1], 1, MaxPadDigits); err == nil && len(args) == 3 {
			p.Delim, err = parseDelim(expr, args[2])
		}
	}
	return err
}

// MaxPadDigits is the widest pad: every non-negative int64 has 19 digits
// or fewer.
const MaxPadDigits = 19

// parseDelim checks a delimiter: one to four printable characters that are
// neither letters nor digits (so no value's text can be mistaken for it
// when it is a number) and not the punctuation of the expression itself.
func parseDelim(expr, d string) (string, error) {
	if d == "" || len(d) > 4 {
		return "", fmt.Errorf("key part %q: a delimiter is 1 to 4 characters, got %q", expr, d)
	}
	for _, c := range []byte(d) {
		if c <= ' ' || c >= 0x7f || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || strings.IndexByte("(),\"'", c) >= 0 {
			return "", fmt.Errorf("key part %q: delimiter %q: want printable punctuation such as # | : / _", expr, d)
		}
	}
	return d, nil
}

func validPath(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			return false
		}
		for i, c := range seg {
			letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
			digit := c >= '0' && c <= '9'
			if !letter && !(digit && i > 0) {
				return false
			}
		}
	}
	return true
}

// checkType reports whether the part's function accepts its field's type.
func (p Part) checkType() error {
	if p.Type <= Invalid || int(p.Type) >= len(typeNames) {
		return fmt.Errorf("key part %q: field %q has no type", p.Expr, p.Field)
	}
	switch p.Func {
	case Reverse:
		if p.Type != Timestamp && p.Type != Int64 && p.Type != Int32 {
			return fmt.Errorf("key part %q: reverse needs a timestamp or integer field, %q is %v", p.Expr, p.Field, p.Type)
		}
	case Day:
		if p.Type != Timestamp {
			return fmt.Errorf("key part %q: day needs a timestamp field, %q is %v", p.Expr, p.Field, p.Type)
		}
	case Pad, BitReverse:
		if p.Type != Timestamp && p.Type != Int64 && p.Type != Int32 {
			return fmt.Errorf("key part %q: %s needs a timestamp or integer field, %q is %v", p.Expr, p.Func, p.Field, p.Type)
		}
	case Hash:
		for i, t := range p.moreTypes[:p.nMore] {
			if t <= Invalid || int(t) >= len(typeNames) {
				return fmt.Errorf("key part %q: field %q has no type", p.Expr, p.more[i])
			}
		}
	}
	return nil
}
