package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Cell is one put of a derived or primary row, without row and timestamp
// (the writer stamps the event version).
type Cell struct {
	Family    string
	Qualifier []byte
	Value     []byte
}

// Ref names one derived thing an entity state owns: a whole row of an index
// or lookup table (Family empty), or one contribution column of a counter
// row shared with other entities.
type Ref struct {
	Table     string
	Row       []byte
	Family    string
	Qualifier []byte
}

// ID is a string that identifies the ref, for sets.
func (r Ref) ID() string {
	dst := make([]byte, 0, len(r.Table)+len(r.Row)+len(r.Family)+len(r.Qualifier)+3)
	dst = append(append(dst, r.Table...), 0)
	dst = append(append(dst, r.Row...), 0)
	dst = append(append(dst, r.Family...), 0)
	return string(append(dst, r.Qualifier...))
}

// Compare orders refs as their IDs would sort, without building them.
func (r Ref) Compare(o Ref) int {
	if c := strings.Compare(r.Table, o.Table); c != 0 {
		return c
	}
	if c := bytes.Compare(r.Row, o.Row); c != 0 {
		return c
	}
	if c := strings.Compare(r.Family, o.Family); c != 0 {
		return c
	}
	return bytes.Compare(r.Qualifier, o.Qualifier)
}

// Item is a derived row (or contribution column) with the cells it holds.
type Item struct {
	Ref
	Cells []Cell
}

// Increment is one fast-mode counter addition.
type Increment struct {
	Table     string
	Row       []byte
	Family    string
	Qualifier []byte
	Delta     int64
	// Bounded: a count in a bounded-mode counter, not a fast increment.
	Bounded bool
}

// Derived is everything one entity state puts in the store.
type Derived struct {
	PrimaryTable string
	PrimaryKey   []byte
	Primary      []Cell
	// Items are index rows, lookup rows and exact-mode counter
	// contributions, sorted by ID.
	Items []Item
	// Increments are fast-mode counter additions, applied once per entity,
	// and the state's counts in bounded-mode counters (Bounded set), which
	// the writer counts through each row's totals.
	Increments []Increment
}

// EntityKey encodes an entity's key fields in order: the identity of its
// contributions in shared counter rows and the input of counter buckets.
func EntityKey(ent *schema.Entity, vals map[string]any) ([]byte, error) {
	return AppendEntityKey(nil, ent, vals)
}

// AppendEntityKey appends the key EntityKey encodes to dst.
func AppendEntityKey(dst []byte, ent *schema.Entity, vals map[string]any) ([]byte, error) {
	out := dst
	for _, k := range ent.Key {
		f := ent.Field(k)
		if f == nil {
			return nil, fmt.Errorf("layout: entity %s has no key field %s", ent.Name, k)
		}
		v, ok := vals[k]
		if !ok || v == nil {
			return nil, fmt.Errorf("layout: entity %s: no value for key field %s", ent.Name, k)
		}
		var err error
		if out, err = rowkey.AppendValue(out, f.Type, v); err != nil {
			return nil, fmt.Errorf("layout: entity %s key field %s: %w", ent.Name, k, err)
		}
	}
	return out, nil
}

// Derive computes the primary row and every derived row of one entity
// state. state holds top-level fields by name and child lists as
// []map[string]any.
func Derive(plan *schema.Plan, ent *schema.Entity, state map[string]any) (*Derived, error) {
	return derive(plan, ent, state, true, nil, nil)
}

// DeriveCopies is Derive without the primary row's cells (Primary is nil):
// what a check of the copies needs, at about two thirds of the cost.
func DeriveCopies(plan *schema.Plan, ent *schema.Entity, state map[string]any) (*Derived, error) {
	return derive(plan, ent, state, false, nil, nil)
}

// DeriveTable is DeriveCopies for one table of the entity's: its Items are
// the rows the state derives in t (Increments, for a counter table, its
// contributions), exactly as DeriveCopies would list them for t. A reader
// checking one index row needs no other table's rows.
func DeriveTable(plan *schema.Plan, ent *schema.Entity, t *schema.Table, state map[string]any) (*Derived, error) {
	return derive(plan, ent, state, false, t, nil)
}

// Scratch keeps the buffers of one derive for the next, for a caller that is
// done with each Derived before it derives again (the reconcile job hashes
// the cells at once, a reader checks one hit): deriving then allocates
// little beyond the row keys. A Derived it returns is valid until the next
// call on the same Scratch, which overwrites its bytes. A Scratch is not
// safe for concurrent use; its zero value is ready.
type Scratch struct {
	a arena
	d Derived
	s slots
	// spare is the item buffer the next sort fills; the sorted items
	// become d.Items and the buffer they came from the next spare.
	spare []Item
	idx   []int32
}

// Derive is layout.Derive into s.
func (s *Scratch) Derive(plan *schema.Plan, ent *schema.Entity, state map[string]any) (*Derived, error) {
	return derive(plan, ent, state, true, nil, s)
}

// DeriveCopies is layout.DeriveCopies into s.
func (s *Scratch) DeriveCopies(plan *schema.Plan, ent *schema.Entity, state map[string]any) (*Derived, error) {
	return derive(plan, ent, state, false, nil, s)
}

// DeriveTable is layout.DeriveTable into s.
func (s *Scratch) DeriveTable(plan *schema.Plan, ent *schema.Entity, t *schema.Table, state map[string]any) (*Derived, error) {
	return derive(plan, ent, state, false, t, s)
}

// start empties s for a derive and returns its derived state, arena and
// slots.
func (s *Scratch) start(primaryTable string) (*Derived, *arena, *slots) {
	s.a.buf, s.a.cells = s.a.buf[:0], s.a.cells[:0]
	s.d = Derived{PrimaryTable: primaryTable, Items: s.d.Items[:0], Increments: s.d.Increments[:0]}
	return &s.d, &s.a, &s.s
}

// derive derives the primary row (withPrimary) and the rows of every other
// table of the entity, or of only when it is set, into sc's buffers when sc
// is not nil.
func derive(plan *schema.Plan, ent *schema.Entity, state map[string]any, withPrimary bool, only *schema.Table, sc *Scratch) (*Derived, error) {
	prim := plan.Primary(ent.Name)
	if prim == nil {
		return nil, fmt.Errorf("layout: entity %s has no primary table", ent.Name)
	}
	// Keys, columns, conditions and counter additions read the state from
	// slots; the primary row's cells and the entity key read it by name.
	var d *Derived
	var a *arena
	var sl *slots
	if sc != nil {
		d, a, sl = sc.start(prim.Name)
	} else {
		d, a, sl = &Derived{PrimaryTable: prim.Name}, &arena{}, &slots{}
	}
	sl.fillTop(ent, state)
	var err error
	if d.PrimaryKey, err = a.keyOf(prim, sl); err != nil {
		return nil, fmt.Errorf("layout: primary key of %s in %s: %w", ent.Name, prim.Name, err)
	}
	if withPrimary {
		if d.Primary, err = primaryCells(plan, ent, prim, state, a); err != nil {
			return nil, err
		}
	}
	ekey, err := a.entityKey(ent, state)
	if err != nil {
		return nil, err
	}
	d.Items = slices.Grow(d.Items[:0], itemsHint(plan, ent, state))
	// Plan.Tables in file order, not TablesOf: derive sorts what it
	// derives, and building the list for every state costs an allocation.
	// Tables with a row per child element come after, element by element.
	eachTables := false
	for _, t := range plan.Tables {
		if !derivesIn(t, ent, only) {
			continue
		}
		if t.Each != "" {
			if ent.Child(t.Each) == nil {
				return nil, fmt.Errorf("layout: %s: entity %s has no child list %s", t.Name, ent.Name, t.Each)
			}
			eachTables = true
			continue
		}
		if !holds(t, sl) {
			continue
		}
		if err := deriveRow(ent, t, sl, d, ekey, a); err != nil {
			return nil, err
		}
	}
	if eachTables {
		if err := deriveElements(plan, ent, state, sl, only, d, ekey, a); err != nil {
			return nil, err
		}
	}
	d.Items = mergeItems(d.Items, sc)
	slices.SortFunc(d.Increments, func(a, b Increment) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		if c := bytes.Compare(a.Row, b.Row); c != 0 {
			return c
		}
		return bytes.Compare(a.Qualifier, b.Qualifier)
	})
	return d, nil
}

// derivesIn reports whether a derive of ent's state, of only's rows when
// only is set, derives rows in t.
func derivesIn(t *schema.Table, ent *schema.Entity, only *schema.Table) bool {
	return t.HoldsCopiesOf(ent.Name) && (only == nil || t.Name == only.Name)
}

// holds reports whether the state in sl has a row in t: always, unless
// the table's condition field is unset.
func holds(t *schema.Table, sl *slots) bool {
	if t.When == "" {
		return true
	}
	v, _ := sl.get(t.WhenRef)
	return schema.Set(v)
}

// deriveElements derives the rows of the tables that hold one row per
// child element. Each element is laid out in the slots once, for every
// such table of its child list. The items come element by element, not
// table by table; mergeItems sorts them by ref, and the rows of one table
// keep the order of their elements.
func deriveElements(plan *schema.Plan, ent *schema.Entity, state map[string]any, sl *slots, only *schema.Table, d *Derived, ekey []byte, a *arena) error {
	defer func() { sl.child = nil }()
	for _, ch := range ent.Children {
		has := false
		for _, t := range plan.Tables {
			if t.Each == ch.Name && derivesIn(t, ent, only) {
				has = true
				break
			}
		}
		if !has {
			continue
		}
		elems, _ := state[ch.Name].([]map[string]any)
		for _, el := range elems {
			sl.fillElem(ch, el)
			for _, t := range plan.Tables {
				if t.Each != ch.Name || !derivesIn(t, ent, only) || !holds(t, sl) {
					continue
				}
				if err := deriveRow(ent, t, sl, d, ekey, a); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mergeItems sorts items by ref and merges those of one ref, in the order
// they were derived: two elements mapping to one index row make one row
// whose later cells replace earlier ones of the same column, and two
// contributions to one counter cell add up. Sorting and merging once is
// cheaper than keeping a map by ref ID while deriving.
func mergeItems(items []Item, sc *Scratch) []Item {
	items = sortItems(items, sc)
	out := items[:0]
	for _, it := range items {
		if n := len(out); n > 0 && out[n-1].Compare(it.Ref) == 0 {
			last := &out[n-1]
			if it.Family != "" {
				a, _ := CellInt64(last.Cells[0].Value)
				b, _ := CellInt64(it.Cells[0].Value)
				last.Cells[0].Value = Int64Cell(a + b)
				continue
			}
			for _, c := range it.Cells {
				last.Cells = setCell(last.Cells, c)
			}
			continue
		}
		out = append(out, it)
	}
	for i := range out {
		slices.SortFunc(out[i].Cells, CompareColumns)
	}
	return out
}

// itemsHint is about how many items a state derives (at most one per
// table, element and counter column), to allocate them at once.
func itemsHint(plan *schema.Plan, ent *schema.Entity, state map[string]any) int {
	n := 0
	for _, t := range plan.Tables {
		if !t.HoldsCopiesOf(ent.Name) {
			continue
		}
		k := 1
		if t.Each != "" {
			elems, _ := state[t.Each].([]map[string]any)
			k = len(elems)
		}
		if t.Counter != nil {
			k *= len(t.Counter.Adds)
		}
		n += k
	}
	return n
}

// sortItems sorts items by ref, stably, by sorting their positions: an
// item is a large struct, and moving positions costs less than moving
// items in a sort's many swaps.
func sortItems(items []Item, sc *Scratch) []Item {
	if slices.IsSortedFunc(items, func(a, b Item) int { return a.Compare(b.Ref) }) {
		return items
	}
	var idx []int32
	var out []Item
	if sc != nil {
		idx, out = slices.Grow(sc.idx[:0], len(items))[:len(items)], slices.Grow(sc.spare[:0], len(items))[:len(items)]
		sc.idx, sc.spare = idx, items[:0]
	} else {
		idx, out = make([]int32, len(items)), make([]Item, len(items))
	}
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := items[a].Compare(items[b].Ref); c != 0 {
			return c
		}
		return int(a - b) // equal refs keep the order they were derived in
	})
	for i, j := range idx {
		out[i] = items[j]
	}
	return out
}

func deriveRow(ent *schema.Entity, t *schema.Table, sl *slots, d *Derived, ekey []byte, a *arena) error {
	switch t.Role {
	case schema.RoleIndex, schema.RoleLookup:
		row, err := a.keyOf(t, sl)
		if err != nil {
			return fmt.Errorf("layout: row key of %s: %w", t.Name, err)
		}
		it := Item{Ref: Ref{Table: t.Name, Row: row}, Cells: a.cellList(1 + len(t.Columns))}
		if t.Ref != nil {
			it.Cells = setCell(it.Cells, Cell{Family: t.Ref.Family, Qualifier: a.str(schema.RefQualifier), Value: d.PrimaryKey})
		}
		for _, c := range t.Columns {
			if c.Field == "" || c.Template {
				continue
			}
			v, ok := sl.get(c.Slot)
			if !ok || v == nil {
				continue
			}
			f := ent.FieldAt(c.Slot)
			if f == nil {
				return fmt.Errorf("layout: %s column %s: no field %s", t.Name, c.Name(), c.Field)
			}
			b, err := a.value(f.Type, v)
			if err != nil {
				return fmt.Errorf("layout: %s column %s: %w", t.Name, c.Name(), err)
			}
			it.Cells = setCell(it.Cells, Cell{Family: c.Family, Qualifier: a.str(c.Qualifier), Value: b})
		}
		d.Items = append(d.Items, it)
	case schema.RoleCounter:
		start := a.mark(64)
		key, err := sl.appendKey(a.buf, t)
		if err != nil {
			return fmt.Errorf("layout: row key of counter %s: %w", t.Name, err)
		}
		if t.Counter.Buckets > 1 {
			key = append(key, byte(t.CounterBucket(ekey)))
		}
		a.buf = key
		row := a.cut(start)
		for _, add := range t.Counter.Adds {
			delta := add.Const
			if add.Field != "" {
				v, ok := sl.get(add.Slot)
				if !ok || v == nil {
					continue
				}
				n, err := rowkey.Normalize(rowkey.Int64, v)
				if err != nil {
					return fmt.Errorf("layout: counter %s adds %s: %w", t.Name, add.Field, err)
				}
				delta = n.(int64)
			}
			if t.Counter.Mode == schema.CounterExact {
				qs := a.mark(len(add.Qualifier) + 1 + len(ekey))
				a.buf = append(append(append(a.buf, add.Qualifier...), 0), ekey...)
				q := a.cut(qs)
				vs := a.mark(8)
				a.buf = binary.BigEndian.AppendUint64(a.buf, uint64(delta))
				cells := append(a.cellList(1), Cell{Family: add.Family, Qualifier: q, Value: a.cut(vs)})
				d.Items = append(d.Items, Item{Ref: Ref{Table: t.Name, Row: row, Family: add.Family, Qualifier: q}, Cells: cells})
				continue
			}
			merged := false
			for i := range d.Increments {
				in := &d.Increments[i]
				if in.Table == t.Name && bytes.Equal(in.Row, row) && in.Family == add.Family && string(in.Qualifier) == add.Qualifier {
					in.Delta += delta
					merged = true
					break
				}
			}
			if !merged {
				d.Increments = append(d.Increments, Increment{Table: t.Name, Row: row, Family: add.Family, Qualifier: a.str(add.Qualifier), Delta: delta, Bounded: t.Counter.Bounded()})
			}
		}
	}
	return nil
}

// setCell adds c, replacing a cell of the same column.
func setCell(cells []Cell, c Cell) []Cell {
	for i := range cells {
		if cells[i].Family == c.Family && bytes.Equal(cells[i].Qualifier, c.Qualifier) {
			cells[i] = c
			return cells
		}
	}
	return append(cells, c)
}

// CompareColumns orders cells by family, then qualifier: the order of a
// derived row's cells (Derived.Primary and each Item's Cells).
func CompareColumns(a, b Cell) int {
	if c := strings.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	return bytes.Compare(a.Qualifier, b.Qualifier)
}

func primaryCells(plan *schema.Plan, ent *schema.Entity, t *schema.Table, state map[string]any, a *arena) ([]Cell, error) {
	n := 0
	for _, c := range t.Columns {
		if !c.Template {
			n++
		} else if ch := ent.Child(c.Child); ch != nil {
			elems, _ := state[ch.Name].([]map[string]any)
			n += len(elems)
		}
	}
	cells := make([]Cell, 0, n)
	for _, c := range t.Columns {
		if !c.Template {
			v, ok := state[c.Field]
			if !ok || v == nil {
				continue
			}
			f := ent.Field(c.Field)
			if f == nil {
				return nil, fmt.Errorf("layout: %s column %s: no field %s", t.Name, c.Name(), c.Field)
			}
			b, err := a.value(f.Type, v)
			if err != nil {
				return nil, fmt.Errorf("layout: %s column %s: %w", t.Name, c.Name(), err)
			}
			cells = append(cells, Cell{Family: c.Family, Qualifier: a.str(c.Qualifier), Value: b})
			continue
		}
		ch := ent.Child(c.Child)
		if ch == nil {
			return nil, fmt.Errorf("layout: %s column %s: no child list %s", t.Name, c.Name(), c.Child)
		}
		elems, _ := state[ch.Name].([]map[string]any)
		seen := newQualSet(len(elems))
		for _, el := range elems {
			q, err := a.qualifier(plan, ent.Name, c, el[ch.Key])
			if err == nil && !seen.add(q) {
				err = fmt.Errorf("child list %s has key %v twice", ch.Name, el[ch.Key])
			}
			if err != nil {
				return nil, fmt.Errorf("layout: %s column %s: %w", t.Name, c.Name(), err)
			}
			var b []byte
			if c.Field == "" {
				b, err = a.element(ch, el)
			} else {
				name := c.Field[len(ch.Name)+1:]
				v, ok := el[name]
				if !ok || v == nil {
					continue
				}
				b, err = a.value(ch.Field(name).Type, v)
			}
			if err != nil {
				return nil, fmt.Errorf("layout: %s column %s: %w", t.Name, c.Name(), err)
			}
			cells = append(cells, Cell{Family: c.Family, Qualifier: q, Value: b})
		}
	}
	slices.SortStableFunc(cells, CompareColumns)
	return cells, nil
}

// qualSet tells whether a qualifier was seen: a list searched in turn for
// the few elements a child list usually holds, a map for long lists.
type qualSet struct {
	list [][]byte
	m    map[string]bool
}

func newQualSet(n int) *qualSet {
	if n > 32 {
		return &qualSet{m: make(map[string]bool, n)}
	}
	return &qualSet{list: make([][]byte, 0, n)}
}

// add records q and reports whether it was new.
func (s *qualSet) add(q []byte) bool {
	if s.m != nil {
		if s.m[string(q)] {
			return false
		}
		s.m[string(q)] = true
		return true
	}
	for _, x := range s.list {
		if bytes.Equal(x, q) {
			return false
		}
	}
	s.list = append(s.list, q)
	return true
}

var _ = store.LatestTimestamp

// CounterKey is the schema key of a counter table's row: the row key
// without the bucket byte Derive appends when the counter is spread over
// several rows. ok is false for a row too short to hold one.
func CounterKey(t *schema.Table, row []byte) (key []byte, ok bool) {
	if t.Counter == nil || t.Counter.Buckets <= 1 {
		return row, true
	}
	if len(row) < 1 {
		return nil, false
	}
	return row[:len(row)-1], true
}
