package layout

import (
	"fmt"
	"slices"

	"github.com/denorm/denorm/schema"
)

// slots is a state laid out by field, as schema.FieldRef places values:
// the top-level values in schema order, and those of the one child element
// being derived. Filled once per state (and per element), it serves every
// table's key parts, columns, conditions and counter additions by index,
// where a map of names served each by a lookup.
//
// Invariant: only the fields the schema declares have slots; every path a
// table reads is one of them (the schema refuses others), so the lookups
// find what a map of the whole state would have.
type slots struct {
	top  []any
	elem []any
	// child is the list whose element elem holds; nil outside elements.
	child *schema.Child
}

// absent fills the slot of a field the state does not hold, which differs
// from a field held as null (nil). It is zero-sized: storing it in an
// interface allocates nothing.
type absent struct{}

// fillTop lays out a state's top-level fields.
func (s *slots) fillTop(ent *schema.Entity, state map[string]any) {
	s.top = fill(s.top, ent.Fields, state)
	s.child = nil
}

// fillElem lays out one element of child list ch.
func (s *slots) fillElem(ch *schema.Child, el map[string]any) {
	s.elem = fill(s.elem, ch.Fields, el)
	s.child = ch
}

func fill(dst []any, fields []*schema.Field, vals map[string]any) []any {
	dst = slices.Grow(dst[:0], len(fields))[:len(fields)]
	for i, f := range fields {
		v, ok := vals[f.Name]
		if !ok {
			v = absent{}
		}
		dst[i] = v
	}
	return dst
}

// get returns the value a FieldRef places, and whether the state holds it.
func (s *slots) get(r schema.FieldRef) (any, bool) {
	var v any
	switch {
	case r.Slot < 0:
		return nil, false
	case r.Child == nil:
		v = s.top[r.Slot]
	case r.Child == s.child:
		v = s.elem[r.Slot]
	default:
		return nil, false // another list's field: not in this element
	}
	if _, no := v.(absent); no {
		return nil, false
	}
	return v, true
}

// appendKey encodes t's row key from the slots onto dst.
func (s *slots) appendKey(dst []byte, t *schema.Table) ([]byte, error) {
	if len(t.KeyRefs) != t.Key.Len() {
		return nil, fmt.Errorf("layout: table %s: its key's fields are not resolved (a plan not made by schema.Parse)", t.Name)
	}
	return t.Key.AppendEncodeWith(dst, func(i, k int) (any, bool) { return s.get(t.KeyRefs[i][k]) })
}

// keyOf encodes t's row key from the slots into the arena.
func (a *arena) keyOf(t *schema.Table, s *slots) ([]byte, error) {
	start := a.mark(64)
	k, err := s.appendKey(a.buf, t)
	if err != nil {
		return nil, err
	}
	a.buf = k
	return a.cut(start), nil
}
