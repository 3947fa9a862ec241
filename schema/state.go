package schema

import (
	"fmt"
	"sort"

	"github.com/denorm/denorm/rowkey"
)

// State is one entity's full state as an event carries it: field name to
// value, and child list name to a list of elements (each a field map).
// Values have the canonical Go types of rowkey.Normalize once checked.
type State map[string]any

// Normalize checks a state against the entity and returns it with every
// value in its canonical type. Key fields are required; other fields may be
// absent or null (the entity simply has no value). Unknown fields, values
// of the wrong type, child lists longer than their max and repeated child
// keys are errors: the writer sends such events to the dead letter.
func (e *Entity) Normalize(raw map[string]any) (State, error) {
	out := State{}
	for name, v := range raw {
		if c := e.Child(name); c != nil {
			elems, err := c.normalize(v)
			if err != nil {
				return nil, fmt.Errorf("schema: %s.%s: %w", e.Name, name, err)
			}
			out[name] = elems
			continue
		}
		f := e.Field(name)
		if f == nil || f.Child != "" {
			return nil, fmt.Errorf("schema: %s has no field %q", e.Name, name)
		}
		if v == nil {
			continue
		}
		nv, err := rowkey.Normalize(f.Type, v)
		if err != nil {
			return nil, fmt.Errorf("schema: %s.%s: %w", e.Name, name, err)
		}
		out[name] = nv
	}
	for _, k := range e.Key {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("schema: %s: key field %q is missing", e.Name, k)
		}
	}
	return out, nil
}

func (c *Child) normalize(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	var items []map[string]any
	switch x := v.(type) {
	case []any:
		for i, it := range x {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("element %d is %T, not an object", i, it)
			}
			items = append(items, m)
		}
	case []map[string]any:
		items = x
	default:
		return nil, fmt.Errorf("want a list of elements, got %T", v)
	}
	if len(items) > c.Max {
		return nil, fmt.Errorf("%d elements, more than max %d", len(items), c.Max)
	}
	out := make([]map[string]any, 0, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		m := map[string]any{}
		for name, val := range it {
			f := c.Field(name)
			if f == nil {
				return nil, fmt.Errorf("element %d: no field %q", i, name)
			}
			if val == nil {
				continue
			}
			nv, err := rowkey.Normalize(f.Type, val)
			if err != nil {
				return nil, fmt.Errorf("element %d: %s: %w", i, name, err)
			}
			m[name] = nv
		}
		k, ok := m[c.Key]
		if !ok {
			return nil, fmt.Errorf("element %d: key field %q is missing", i, c.Key)
		}
		id := fmt.Sprintf("%v", k)
		if seen[id] {
			return nil, fmt.Errorf("element %d: key %s=%v appears twice", i, c.Key, k)
		}
		seen[id] = true
		out = append(out, m)
	}
	// Elements in child-key order, as their cells sort in a wide row.
	keyType := c.Field(c.Key).Type
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := rowkey.AppendValue(nil, keyType, out[i][c.Key])
		b, _ := rowkey.AppendValue(nil, keyType, out[j][c.Key])
		return string(a) < string(b)
	})
	return out, nil
}

// Values returns the entity-level fields of a normalized state, for key
// encoding of tables with one row per entity.
func (s State) Values(e *Entity) rowkey.Values {
	v := rowkey.Values{}
	for _, f := range e.Fields {
		if x, ok := s[f.Name]; ok {
			v[f.Name] = x
		}
	}
	return v
}

// Elements returns one value set per element of a child list: the entity's
// fields plus the element's under "child.field" paths, as keys and columns
// of tables with `each` name them.
func (s State) Elements(e *Entity, child string) []rowkey.Values {
	elems, _ := s[child].([]map[string]any)
	out := make([]rowkey.Values, 0, len(elems))
	for _, el := range elems {
		v := s.Values(e)
		for name, x := range el {
			v[child+"."+name] = x
		}
		out = append(out, v)
	}
	return out
}
