package layout

import (
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// arena hands out the byte slices and cell lists of one derived state, cut
// from a few shared buffers, so that deriving a state costs a handful of
// allocations rather than one per key, qualifier, value and row. Every
// slice it hands out is capped at its own length: appending to one never
// writes into another. A Derived keeps its buffers alive as long as any of
// its cells is referenced; nothing is reused across states.
type arena struct {
	buf   []byte
	cells []Cell
}

// mark is where the next bytes appended to a.buf start.
func (a *arena) mark(n int) int {
	if cap(a.buf)-len(a.buf) < n {
		// A fresh buffer rather than growing this one: the slices already
		// cut keep the old one alive anyway, and nothing is copied.
		a.buf = make([]byte, 0, max(n, 2*cap(a.buf), 1024))
	}
	return len(a.buf)
}

// cut returns the bytes appended since mark start.
func (a *arena) cut(start int) []byte { return a.buf[start:len(a.buf):len(a.buf)] }

func (a *arena) str(s string) []byte {
	start := a.mark(len(s))
	a.buf = append(a.buf, s...)
	return a.cut(start)
}

// value encodes one field value as EncodeValue does, into the arena.
func (a *arena) value(t rowkey.Type, v any) ([]byte, error) {
	n := 8
	if s, ok := v.(string); ok {
		n = len(s)
	}
	start := a.mark(n)
	b, err := AppendValue(a.buf, t, v)
	if err != nil {
		return nil, err
	}
	a.buf = b
	return a.cut(start), nil
}

// qualifier builds a template column's qualifier for one child element,
// as schema.Column.QualifierFor does, into the arena.
func (a *arena) qualifier(plan *schema.Plan, entity string, c *schema.Column, childKey any) ([]byte, error) {
	n := len(c.Prefix) + len(c.Suffix) + 16
	if s, ok := childKey.(string); ok {
		n += len(s)
	}
	start := a.mark(n)
	b, err := c.AppendQualifier(a.buf, plan, entity, childKey)
	if err != nil {
		return nil, err
	}
	a.buf = b
	return a.cut(start), nil
}

// entityKey encodes an entity's key, as EntityKey does, into the arena.
func (a *arena) entityKey(ent *schema.Entity, vals map[string]any) ([]byte, error) {
	start := a.mark(64)
	b, err := AppendEntityKey(a.buf, ent, vals)
	if err != nil {
		return nil, err
	}
	a.buf = b
	return a.cut(start), nil
}

// element encodes one child element as EncodeElement does, into the arena.
func (a *arena) element(c *schema.Child, elem map[string]any) ([]byte, error) {
	start := a.mark(64)
	b, err := AppendElement(a.buf, c, elem)
	if err != nil {
		return nil, err
	}
	a.buf = b
	return a.cut(start), nil
}

// cellList returns an empty cell list with room for n cells, cut from the
// arena's cell buffer.
func (a *arena) cellList(n int) []Cell {
	if cap(a.cells)-len(a.cells) < n {
		a.cells = make([]Cell, 0, max(n, 2*cap(a.cells), 32))
	}
	l := len(a.cells)
	a.cells = a.cells[:l+n]
	return a.cells[l : l : l+n]
}
