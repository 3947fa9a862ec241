package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Bookkeeping qualifiers in the first family of a primary table.
var (
	// QualPending holds the refs of earlier states that the version in the
	// row must delete; a replay of that version redoes the deletes.
	QualPending = []byte("\x00p")
	// QualTombstone marks an entity deleted at the cell's timestamp. A
	// tombstone rather than a row delete lets a late, older event see that
	// the entity is gone.
	QualTombstone = []byte("\x00d")
)

// IsBookkeeping reports whether a qualifier is the writer's own.
func IsBookkeeping(q []byte) bool { return len(q) > 0 && q[0] == 0 }

// BookFamily is the family that holds a primary table's bookkeeping cells.
func BookFamily(t *schema.Table) string { return t.Families[0].Name }

// State is an entity as its primary row shows it.
type State struct {
	// Version is the newest timestamp in the row; 0 when the row is empty.
	Version int64
	// Deleted: the newest thing in the row is a tombstone.
	Deleted bool
	// Values: top-level fields and child lists; nil when deleted or absent.
	Values map[string]any
	// Pending: the refs the version's write was to delete.
	Pending []Ref
	// WrittenBy is where the event whose write made the version was in
	// its log, as the row's pending record says; nil when the record
	// names none (written before records carried it, or the row holds
	// no record at the version). The writer needs it to tell a write it
	// may not have finished (docs/writer.md, "unfinished writes").
	WrittenBy *Position
	// Counted is what bounded counters hold of the entity, as the row's
	// newest Counted record says (nil when it has none); CountedAt is that
	// record's timestamp.
	Counted   *Counted
	CountedAt int64
	// MovedAt is the writer's clock when it last moved the entity into
	// this row (layout.QualMoved), 0 when the row holds no such cell;
	// read with Counted.
	MovedAt int64
	// Live holds the live-copy cells, which carry the referenced entities'
	// versions and are not part of Version.
	Live LiveCells
}

// LiveCells are the live-copy cells of a primary row in qualifier order (the
// row's), the newest version of each: a slice of the row's cells rather
// than a map, since a state is read for every row and looked up a few
// times.
type LiveCells []store.Cell

// Get finds the cell of qualifier q.
func (l LiveCells) Get(q []byte) (store.Cell, bool) {
	i, ok := slices.BinarySearchFunc(l, q, func(c store.Cell, q []byte) int { return bytes.Compare(c.Qualifier, q) })
	if !ok {
		return store.Cell{}, false
	}
	return l[i], true
}

// Exists reports whether the row holds a live entity.
func (s *State) Exists() bool { return s.Version > 0 && !s.Deleted }

// ReadState rebuilds an entity from its primary row.
func ReadState(plan *schema.Plan, ent *schema.Entity, t *schema.Table, row store.Row) (*State, error) {
	return ReadStateSkipping(plan, ent, t, row, 0)
}

// Skip names bookkeeping of a primary row that a caller of
// ReadStateSkipping does not need decoded; its State fields stay empty.
type Skip uint8

const (
	// SkipPending leaves State.Pending and WrittenBy nil: only the writer
	// redoes deletes.
	SkipPending Skip = 1 << iota
	// SkipCounted leaves State.Counted nil: only the writer and reconcile
	// read the bounded counters' record.
	SkipCounted
	// SkipBookkeeping is what a reader showing the entity skips.
	SkipBookkeeping = SkipPending | SkipCounted
)

// ReadStateSkipping is ReadState without decoding the bookkeeping skip
// names, which a reader would pay for at every row and never use.
func ReadStateSkipping(plan *schema.Plan, ent *schema.Entity, t *schema.Table, row store.Row, skip Skip) (*State, error) {
	st := &State{}
	if row.Empty() {
		return st, nil
	}
	book := BookFamily(t)
	var tomb int64 = -1
	// dataAt is the newest data cell's version. The writer puts every
	// column of a state at its version in one row mutation, and deletes
	// below it the columns the state dropped, so a data cell below dataAt
	// belongs to no state: a column another writer's older state put while
	// this one was written from a state that did not know it (two writers
	// on one entity, which only a broken log assumption makes: docs/writer.md,
	// A3). It is left out.
	var dataAt int64
	for _, c := range row.Cells {
		if c.Family == book && IsLive(c.Qualifier) {
			// Versions of a column come newest first: keep the first.
			if n := len(st.Live); n == 0 || !bytes.Equal(st.Live[n-1].Qualifier, c.Qualifier) {
				st.Live = append(st.Live, c)
			}
			continue
		}
		if c.Timestamp > st.Version {
			st.Version = c.Timestamp
		}
		if c.Family == book && bytes.Equal(c.Qualifier, QualTombstone) {
			tomb = c.Timestamp
		}
		if !(c.Family == book && IsBookkeeping(c.Qualifier)) {
			dataAt = max(dataAt, c.Timestamp)
		}
	}
	if tomb >= st.Version {
		st.Deleted = true
	}
	// The decoded key fields start the state, in a map made once with room
	// for every field and child list, so filling it never grows it.
	state := make(map[string]any, len(ent.Fields)+len(ent.Children))
	err := t.Key.DecodeValuesInto(row.Key, state)
	if err != nil {
		return nil, fmt.Errorf("layout: primary key of %s: %w", t.Name, err)
	}
	var children []childElems // a list's entry made at its first element
	for i, c := range row.Cells {
		if c.Family == book && IsLive(c.Qualifier) {
			continue
		}
		if c.Family == book && IsBookkeeping(c.Qualifier) {
			if skip&SkipCounted == 0 && bytes.Equal(c.Qualifier, QualCounted) && (st.Counted == nil || c.Timestamp > st.CountedAt) {
				if st.Counted, err = DecodeCounted(c.Value); err != nil {
					return nil, fmt.Errorf("layout: counted record of %s row %s: %w", t.Name, store.Printable(row.Key), err)
				}
				st.CountedAt = c.Timestamp
			}
			if skip&SkipCounted == 0 && st.MovedAt == 0 && bytes.Equal(c.Qualifier, QualMoved) {
				if st.MovedAt, err = ParseMoved(c.Value); err != nil {
					return nil, fmt.Errorf("layout: %s row %s: %w", t.Name, store.Printable(row.Key), err)
				}
			}
			if skip&SkipPending == 0 && bytes.Equal(c.Qualifier, QualPending) && c.Timestamp == st.Version {
				if st.Pending, st.WrittenBy, err = DecodePending(c.Value); err != nil {
					return nil, fmt.Errorf("layout: pending refs of %s row %s: %w", t.Name, store.Printable(row.Key), err)
				}
			}
			continue
		}
		if st.Deleted || c.Timestamp < dataAt {
			continue
		}
		if err := readCell(plan, ent, t, c, state, &children, len(row.Cells)-i); err != nil {
			return nil, err
		}
	}
	if st.Deleted {
		return st, nil
	}
	for _, ce := range children {
		state[ce.ch.Name] = ce.elems
	}
	st.Values = state
	return st, nil
}

// childElems is one child list's elements as a row's cells fill them. An
// entity has a child list or two: a slice of them is searched faster than
// a map is hashed.
type childElems struct {
	ch    *schema.Child
	elems []map[string]any
	keys  []any // elems[i]'s key, compared without a lookup in elems[i]
}

// readCell decodes one cell of a primary row into state or into the
// element of children it belongs to. left is how many of the row's cells
// are still to come, this one included: a list holds at most that many
// more elements, the capacity its slices are made with.
func readCell(plan *schema.Plan, ent *schema.Entity, t *schema.Table, c store.Cell, state map[string]any, children *[]childElems, left int) error {
	for _, col := range t.Columns {
		if col.Family != c.Family {
			continue
		}
		if !col.Template {
			if string(c.Qualifier) != col.Qualifier {
				continue
			}
			f := ent.Field(col.Field)
			v, err := DecodeValue(f.Type, c.Value)
			if err != nil {
				return fmt.Errorf("layout: %s column %s: %w", t.Name, col.Name(), err)
			}
			state[col.Field] = v
			return nil
		}
		key, ok := col.ChildKeyOf(plan, ent.Name, c.Qualifier)
		if !ok {
			continue
		}
		ch := ent.Child(col.Child)
		var ce *childElems
		for k := range *children {
			if (*children)[k].ch == ch {
				ce = &(*children)[k]
				break
			}
		}
		if ce == nil {
			*children = append(*children, childElems{ch: ch, elems: make([]map[string]any, 0, left), keys: make([]any, 0, left)})
			ce = &(*children)[len(*children)-1]
		}
		var el map[string]any
		// Newest element first: a list stored a column per field has an
		// element's cells one after another.
		for k := len(ce.keys) - 1; k >= 0; k-- {
			if ce.keys[k] == key {
				el = ce.elems[k]
				break
			}
		}
		if el == nil {
			el = make(map[string]any, len(ch.Fields))
			el[ch.Key] = key
			ce.elems = append(ce.elems, el)
			ce.keys = append(ce.keys, key)
		}
		if col.Field == "" {
			if err := decodeElementInto(ch, c.Value, el); err != nil {
				return fmt.Errorf("layout: %s column %s: %w", t.Name, col.Name(), err)
			}
			return nil
		}
		name := col.Field[len(ch.Name)+1:]
		v, err := DecodeValue(ch.Field(name).Type, c.Value)
		if err != nil {
			return fmt.Errorf("layout: %s column %s: %w", t.Name, col.Name(), err)
		}
		el[name] = v
		return nil
	}
	return nil // a cell no column maps: left alone (a live copy, or a foreign column)
}

// EncodeRefs serializes refs for the pending cell, sorted so equal sets
// encode equally.
func EncodeRefs(refs []Ref) []byte {
	rs := refs
	if !slices.IsSortedFunc(rs, Ref.Compare) {
		// Sorted in a copy: the caller's list is left as it was. The
		// writer's lists come sorted already.
		rs = slices.Clone(refs)
		slices.SortFunc(rs, Ref.Compare)
	}
	n := binary.MaxVarintLen64 + pendingAtSize // room for EncodePending's position
	for _, r := range rs {
		n += 4*binary.MaxVarintLen16 + len(r.Table) + len(r.Row) + len(r.Family) + len(r.Qualifier)
	}
	out := binary.AppendUvarint(make([]byte, 0, n), uint64(len(rs)))
	for _, r := range rs {
		out = append(binary.AppendUvarint(out, uint64(len(r.Table))), r.Table...)
		out = append(binary.AppendUvarint(out, uint64(len(r.Row))), r.Row...)
		out = append(binary.AppendUvarint(out, uint64(len(r.Family))), r.Family...)
		out = append(binary.AppendUvarint(out, uint64(len(r.Qualifier))), r.Qualifier...)
	}
	return out
}

// DecodeRefs is the inverse of EncodeRefs.
func DecodeRefs(b []byte) ([]Ref, error) {
	refs, rest, err := decodeRefs(b)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the last ref", len(rest))
	}
	return refs, nil
}

// decodeRefs decodes the refs at the start of b and returns what follows
// them.
func decodeRefs(b []byte) ([]Ref, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("bad ref count")
	}
	rd := refReader{b: owned(b[k:])}
	refs := make([]Ref, 0, n)
	for i := uint64(0); i < n; i++ {
		r, ok := rd.ref()
		if !ok {
			return nil, nil, fmt.Errorf("ref %d is truncated", i)
		}
		refs = append(refs, r)
	}
	return refs, rd.b, nil
}

// owned copies an encoded record once, so that what is decoded from it can
// point into the copy: a cell's value is only the caller's until the next
// read, and one copy costs less than one per part.
func owned(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// refReader reads the four length-prefixed parts of encoded refs from a
// buffer it owns: the parts point into it, and the buffer is never written.
type refReader struct{ b []byte }

func (rd *refReader) part() ([]byte, bool) {
	l, k := binary.Uvarint(rd.b)
	if k <= 0 || uint64(len(rd.b)-k) < l {
		return nil, false
	}
	p := rd.b[k : k+int(l) : k+int(l)]
	rd.b = rd.b[k+int(l):]
	return p, true
}

func (rd *refReader) ref() (Ref, bool) {
	var parts [4][]byte
	for j := range parts {
		var ok bool
		if parts[j], ok = rd.part(); !ok {
			return Ref{}, false
		}
	}
	// The table and family strings share the owned buffer (unsafe.String):
	// it is never written after the copy.
	return Ref{Table: bytesString(parts[0]), Row: parts[1], Family: bytesString(parts[2]), Qualifier: parts[3]}, true
}

func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Refs lists the refs of a derived state.
func (d *Derived) Refs() []Ref {
	out := make([]Ref, len(d.Items))
	for i, it := range d.Items {
		out[i] = it.Ref
	}
	return out
}

var _ = rowkey.String
