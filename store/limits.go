package store

import (
	"errors"
	"fmt"
)

// MaxRowKeySize is HBase's limit on a row key's length: the KeyValue
// format stores it in a short. Every backend refuses longer keys, so that a
// schema that works on the embedded store cannot fail on HBase.
const MaxRowKeySize = 32767

// CellSize is the size a cell takes in HBase's KeyValue format, the figure
// the maximum cell size is checked against: 20 fixed bytes (lengths,
// timestamp, type) plus row, family, qualifier and value.
func CellSize(row []byte, family string, qualifier, value []byte) int {
	return 20 + len(row) + len(family) + len(qualifier) + len(value)
}

// ErrRowKey is matched (errors.Is) by every RowKeyError.
var ErrRowKey = errors.New("bad row key")

// RowKeyError is a mutation refused for its row key: empty, or longer than
// MaxRowKeySize.
type RowKeyError struct {
	Table string
	Size  int // the key's length; 0 when empty
}

func (e *RowKeyError) Error() string {
	if e.Size == 0 {
		return fmt.Sprintf("table %q: row key is empty", e.Table)
	}
	return fmt.Sprintf("table %q: row key of %d bytes is over HBase's limit of %d", e.Table, e.Size, MaxRowKeySize)
}

// Is makes errors.Is(err, ErrRowKey) true.
func (e *RowKeyError) Is(target error) bool { return target == ErrRowKey }

// IsRefused reports whether err is a store's refusal of one mutation for
// what it carries (a key or a cell over a limit) rather than a failure of
// the store: sending the same mutation again fails the same way, so the
// event it came from is bad input, not something to retry.
func IsRefused(err error) bool {
	return errors.Is(err, ErrCellTooBig) || errors.Is(err, ErrRowKey)
}
