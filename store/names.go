package store

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadTableName: a table name HBase would refuse.
var ErrBadTableName = errors.New("bad table name")

// MaxTableNameLen bounds a table name. HBase keeps a table as a directory
// named after it, so a name is bounded by a file name's 255 bytes.
const MaxTableNameLen = 255

// CheckTableName applies HBase's rules for the name of a new table
// ([namespace:]qualifier): the qualifier is letters, digits, '_', '-' and
// '.', not starting with '.' or '-'; the namespace is letters, digits and
// '_', and not hbase (HBase's own tables live there). Backends call it on
// create, so that a table the embedded store accepts can also be created
// on HBase, and a name can never break a listing (a newline, a slash).
func CheckTableName(name string) error {
	bad := func(why string) error {
		shown := name
		if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
		return fmt.Errorf("%w %q: %s", ErrBadTableName, shown, why)
	}
	if name == "" {
		return bad("it is empty")
	}
	if len(name) > MaxTableNameLen {
		return bad(fmt.Sprintf("it is %d bytes, over the limit of %d", len(name), MaxTableNameLen))
	}
	ns, q, hasNS := strings.Cut(name, ":")
	if !hasNS {
		ns, q = "", name
	}
	if hasNS {
		if ns == "" {
			return bad("the namespace before ':' is empty")
		}
		for _, c := range []byte(ns) {
			if !isWord(c) {
				return bad("a namespace is letters, digits and '_'")
			}
		}
		if ns == "hbase" {
			return bad("the hbase namespace holds HBase's own tables")
		}
	}
	if q == "" {
		return bad("the table name after the namespace is empty")
	}
	if q[0] == '.' || q[0] == '-' {
		return bad("a table name cannot start with '.' or '-'")
	}
	for _, c := range []byte(q) {
		if !isWord(c) && c != '-' && c != '.' {
			return bad("a table name is letters, digits, '_', '-' and '.' (with an optional namespace: ns:name)")
		}
	}
	return nil
}

func isWord(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
