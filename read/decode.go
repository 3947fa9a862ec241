package read

import (
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// entityRow turns a primary row into the entity's fields, with live copies
// in place of the snapshot values for the references the state holds.
// ok is false for an absent or deleted entity.
func (r *Reader) entityRow(qq *query, row store.Row) (map[string]any, *layout.State, bool, error) {
	st, err := layout.ReadStateSkipping(r.plan, qq.ent, qq.primary, row, layout.SkipBookkeeping)
	if err != nil {
		return nil, nil, false, err
	}
	if !st.Exists() {
		return nil, st, false, nil
	}
	if err := r.applyLive(qq.ent, st); err != nil {
		return nil, nil, false, err
	}
	return st.Values, st, true, nil
}

// applyLive overwrites copied fields with the live copies the row holds.
// Copies of references the state no longer holds are ignored (see the
// writer's design).
func (r *Reader) applyLive(ent *schema.Entity, st *layout.State) error {
	if len(st.Live) == 0 {
		return nil
	}
	// The keys are enough: the lookup rows are not read here.
	refs, err := layout.LiveKeys(r.plan, ent, st.Values)
	if err != nil {
		return err
	}
	for _, lr := range refs {
		refEnt := r.plan.Entity(lr.Ref.Entity)
		if refEnt == nil {
			continue
		}
		keyField := ent.Field(lr.Ref.Key)
		for _, c := range lr.Ref.Copies {
			if c.Intent != schema.IntentLive {
				continue
			}
			cell, ok := st.Live.Get(layout.LiveQualifier(lr.Ref, lr.Key, c.From))
			if !ok {
				continue
			}
			from := refEnt.Field(c.From)
			if from == nil {
				continue
			}
			v, err := layout.DecodeValue(from.Type, cell.Value)
			if err != nil {
				return fmt.Errorf("read: live copy %s of %s: %w", c.Field, ent.Name, err)
			}
			target := ent.Field(c.Field)
			if target == nil || keyField == nil {
				continue
			}
			if target.Child == "" {
				st.Values[target.Name] = v
				continue
			}
			elems, _ := st.Values[target.Child].([]map[string]any)
			for _, el := range elems {
				if equalValue(el[keyField.Name], lr.Value) {
					el[target.Name] = v
				}
			}
		}
	}
	return nil
}

// indexRow decodes an index (or lookup) row: the key's fields plus the
// covered columns.
func (r *Reader) indexRow(qq *query, row store.Row) (map[string]any, error) {
	vals, err := qq.t.Key.DecodeValues(row.Key)
	if err != nil {
		return nil, fmt.Errorf("read: %s row %s: %w", qq.t.Name, store.Printable(row.Key), err)
	}
	out := make(map[string]any, len(vals)+len(qq.t.Columns))
	for k, v := range vals {
		out[k] = v
	}
	for _, c := range qq.t.Columns {
		if c.Field == "" || c.Template {
			continue
		}
		cell, ok := row.Latest(c.Family, []byte(c.Qualifier))
		if !ok {
			continue
		}
		f := qq.ent.Field(c.Field)
		if f == nil {
			continue
		}
		v, err := layout.DecodeValue(f.Type, cell.Value)
		if err != nil {
			return nil, fmt.Errorf("read: %s column %s: %w", qq.t.Name, c.Name(), err)
		}
		out[c.Field] = v
	}
	return out, nil
}

func equalValue(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return a == b
}
