package layout

import (
	"bytes"
	"fmt"

	"github.com/denorm/denorm/schema"
)

// DerivesRow reports whether state derives the row key in t, an index or
// lookup table that holds copies of ent: whether DeriveTable(plan, ent, t,
// state) lists an item of t with that row. It is what a reader checking a
// thin index hit against the primary row needs, and it computes the row
// keys the state derives in t, one per element for a table of a child
// list, and none of their cells. It fails where DeriveTable fails on a
// key (the primary key, the entity key, a row key of t); a column value
// that DeriveTable could not encode, it never looks at.
func (s *Scratch) DerivesRow(plan *schema.Plan, ent *schema.Entity, t *schema.Table, state map[string]any, key []byte) (bool, error) {
	if t.Role != schema.RoleIndex && t.Role != schema.RoleLookup {
		return false, fmt.Errorf("layout: %s is not an index or lookup table", t.Name)
	}
	prim := plan.Primary(ent.Name)
	if prim == nil {
		return false, fmt.Errorf("layout: entity %s has no primary table", ent.Name)
	}
	if !derivesIn(t, ent, nil) {
		return false, nil
	}
	// As derive does up to its tables: the primary key and the entity key
	// are computed for their errors, which DeriveTable returns too.
	_, a, sl := s.start(prim.Name)
	sl.fillTop(ent, state)
	if _, err := a.keyOf(prim, sl); err != nil {
		return false, fmt.Errorf("layout: primary key of %s in %s: %w", ent.Name, prim.Name, err)
	}
	if _, err := a.entityKey(ent, state); err != nil {
		return false, err
	}
	if t.Each == "" {
		return s.derivesKey(t, key)
	}
	ch := ent.Child(t.Each)
	if ch == nil {
		return false, fmt.Errorf("layout: %s: entity %s has no child list %s", t.Name, ent.Name, t.Each)
	}
	defer func() { sl.child = nil }()
	elems, _ := state[ch.Name].([]map[string]any)
	for _, el := range elems {
		sl.fillElem(ch, el)
		if ok, err := s.derivesKey(t, key); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// derivesKey reports whether the state laid out in s's slots has the row
// key in t, as deriveRow would derive it.
func (s *Scratch) derivesKey(t *schema.Table, key []byte) (bool, error) {
	if !holds(t, &s.s) {
		return false, nil
	}
	row, err := s.a.keyOf(t, &s.s)
	if err != nil {
		return false, fmt.Errorf("layout: row key of %s: %w", t.Name, err)
	}
	return bytes.Equal(row, key), nil
}
