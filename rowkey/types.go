package rowkey

import "fmt"

// Type is the type of a field as it appears in a key.
type Type int

// The field types a schema can declare. Every one has an order-preserving
// encoding (see value.go).
const (
	Invalid Type = iota
	String
	Int32
	Int64
	Timestamp // milliseconds since the Unix epoch, UTC
	Bool
	Bytes
	Float64
)

var typeNames = [...]string{
	Invalid:   "invalid",
	String:    "string",
	Int32:     "int32",
	Int64:     "int64",
	Timestamp: "timestamp",
	Bool:      "bool",
	Bytes:     "bytes",
	Float64:   "float64",
}

func (t Type) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// ParseType reads a type name as written in a schema.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if i != int(Invalid) && n == s {
			return Type(i), nil
		}
	}
	return Invalid, fmt.Errorf("unknown type %q (want string, int32, int64, timestamp, bool, bytes or float64)", s)
}

// Integer reports whether values of t can be added by a counter.
func (t Type) Integer() bool { return t == Int32 || t == Int64 }

// Numeric reports whether t holds a number.
func (t Type) Numeric() bool { return t == Int32 || t == Int64 || t == Float64 }

// FixedWidth is the encoded size of a value of t, or -1 when it varies.
func (t Type) FixedWidth() int {
	switch t {
	case Int32:
		return 4
	case Int64, Timestamp, Float64:
		return 8
	case Bool:
		return 1
	}
	return -1
}

// MarshalText writes the type's schema name.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }
