package schema

import "strings"

// FieldRef is where a field's value lives in an entity state laid out by
// slot, one slot per field in schema order: Child is nil for a top-level
// field, whose Slot indexes Entity.Fields, else the child list whose
// elements hold the field (Slot indexes Child.Fields). Slot is -1 when the
// path names no field of the entity.
//
// A plan resolves the field paths its tables read (key parts, columns,
// conditions, counter additions) once, when it is parsed, so that a derive
// finds each value by index instead of looking its name up at every table.
type FieldRef struct {
	Child *Child
	Slot  int
}

// Ref resolves a field path: "status", or "items.sku" for a child's field.
func (e *Entity) Ref(path string) FieldRef {
	if child, name, ok := strings.Cut(path, "."); ok {
		if c := e.Child(child); c != nil {
			for i, f := range c.Fields {
				if f.Name == name {
					return FieldRef{Child: c, Slot: i}
				}
			}
		}
		return FieldRef{Slot: -1}
	}
	for i, f := range e.Fields {
		if f.Name == path {
			return FieldRef{Slot: i}
		}
	}
	return FieldRef{Slot: -1}
}

// FieldAt is the field a FieldRef places, nil for Slot -1.
func (e *Entity) FieldAt(r FieldRef) *Field {
	switch {
	case r.Slot < 0:
		return nil
	case r.Child == nil:
		return e.Fields[r.Slot]
	default:
		return r.Child.Fields[r.Slot]
	}
}

// assignSlots resolves, for every table of an entity, the field paths it
// reads (Table.KeyRefs and WhenRef, Column.Slot, Add.Slot).
func (p *Plan) assignSlots() {
	for _, t := range p.Tables {
		ent := p.Entity(t.Entity)
		if ent == nil || t.Key == nil {
			continue
		}
		t.KeyRefs = make([][]FieldRef, t.Key.Len())
		for i := range t.KeyRefs {
			for _, f := range t.Key.Part(i).Fields() {
				t.KeyRefs[i] = append(t.KeyRefs[i], ent.Ref(f))
			}
		}
		t.WhenRef = FieldRef{Slot: -1}
		if t.When != "" {
			t.WhenRef = ent.Ref(t.When)
		}
		for _, c := range t.Columns {
			c.Slot = FieldRef{Slot: -1}
			if c.Field != "" {
				c.Slot = ent.Ref(c.Field)
			}
		}
		if t.Counter != nil {
			for _, a := range t.Counter.Adds {
				a.Slot = FieldRef{Slot: -1}
				if a.Field != "" {
					a.Slot = ent.Ref(a.Field)
				}
			}
		}
	}
}
