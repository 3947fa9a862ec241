package rowkey

import (
	"fmt"
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
)

var funcNames = [...]string{Plain: "", Reverse: "reverse", Salt: "salt", Hash: "hash", Day: "day"}

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
	N     int    // Salt: number of buckets; Hash: number of bytes; otherwise 0
	Type  Type   // the field's type; set before the part is used in a Spec
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
		return fmt.Sprintf("%s(%s, %d)", p.Func, p.Field, p.N)
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
	default:
		return p, fmt.Errorf("key part %q: unknown function %q (want reverse, day, salt or hash)", expr, name)
	}
	wantArgs := 1
	if p.Func == Salt || p.Func == Hash {
		wantArgs = 2
	}
	if len(args) != wantArgs {
		return p, fmt.Errorf("key part %q: %s takes %d argument(s), got %d", expr, name, wantArgs, len(args))
	}
	if !validPath(args[0]) {
		return p, fmt.Errorf("key part %q: %q is not a field path", expr, args[0])
	}
	p.Field = args[0]
	if wantArgs == 2 {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return p, fmt.Errorf("key part %q: %q is not a whole number", expr, args[1])
		}
		max := MaxSaltBuckets
		if p.Func == Hash {
			max = MaxHashBytes
		}
		if n < 1 || n > max {
			return p, fmt.Errorf("key part %q: %s wants 1 to %d, got %d", expr, name, max, n)
		}
		p.N = n
	}
	return p, nil
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
	}
	return nil
}
