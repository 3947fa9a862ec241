package layout

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Live copies (reference fields with intent live) are cells of their own in
// the referencing entity's primary row, in its bookkeeping family:
//
//	qualifier 0x01, reference name, 0x00, encoded reference key, 0x00, field
//	timestamp the version of the referenced entity
//
// Their timestamps are the reference's versions, never the entity's, so an
// entity write (which clears only its own columns) never masks them, and the
// newest reference version wins wherever events arrive from. The lookup
// table keeps, at the row whose key is just the reference key's prefix, the
// reference's latest copied values (qualifier 0x01 + field), so that an
// entity written after the reference changed picks them up.

// The reference row also keeps the referenced entity's own state, since a
// referenced entity without a primary table has no other memory of it:
//
//	qualifier 0x00 'v', timestamp the newest version seen, value RefUpserted
//	or RefDeleted
//
// A refresh older than that cell is stale and is skipped, so a late, older
// upsert cannot resurrect a deleted reference in rows written after the
// delete (whose copies no delete marker covers).
var QualRefState = []byte("\x00v")

// QualRefFanned marks, in the reference row, the version whose fan-out
// last ran to its end: written, empty, after every referencing row took
// that version's values. While it is at the timestamp of the reference
// row's values, every row the lookup table listed then holds them, so an
// upsert that copies the same values has nothing to rewrite. A fan-out a
// crash cut short leaves it older than the values.
var QualRefFanned = []byte("\x00f")

// Values of the QualRefState cell.
const (
	RefUpserted byte = 0
	RefDeleted  byte = 1
)

// RefState reads the referenced entity's state from its reference row: the
// newest version seen (0 when none) and whether it was a delete.
func RefState(row store.Row, family string) (version int64, deleted bool) {
	c, ok := row.Latest(family, QualRefState)
	if !ok {
		return 0, false
	}
	return c.Timestamp, len(c.Value) == 1 && c.Value[0] == RefDeleted
}

// liveMark starts every live-copy qualifier.
const liveMark = 0x01

// IsLive reports whether a qualifier holds a live copy.
func IsLive(q []byte) bool { return len(q) > 0 && q[0] == liveMark }

// LiveQualifier is the qualifier of one live copy in the primary row.
func LiveQualifier(ref *schema.Reference, refKey []byte, from string) []byte {
	return AppendLiveQualifier(make([]byte, 0, LiveQualifierLen(ref, refKey, from)), ref, refKey, from)
}

// LiveQualifierLen is the length of LiveQualifier(ref, refKey, from).
func LiveQualifierLen(ref *schema.Reference, refKey []byte, from string) int {
	return 3 + len(ref.Name) + len(refKey) + len(from)
}

// AppendLiveQualifier appends LiveQualifier(ref, refKey, from) to dst.
func AppendLiveQualifier(dst []byte, ref *schema.Reference, refKey []byte, from string) []byte {
	dst = append(append(dst, liveMark), ref.Name...)
	dst = append(append(dst, 0), refKey...)
	return append(append(dst, 0), from...)
}

// SourceQualifier is the qualifier, in a lookup table's reference row, of
// the reference's latest value of a copied field.
func SourceQualifier(from string) []byte {
	return AppendSourceQualifier(make([]byte, 0, 1+len(from)), from)
}

// AppendSourceQualifier appends SourceQualifier(from) to dst.
func AppendSourceQualifier(dst []byte, from string) []byte {
	return append(append(dst, liveMark), from...)
}

// LiveRef is one referenced entity that a state copies live fields from.
type LiveRef struct {
	Ref    *schema.Reference
	Lookup *schema.Table
	Value  any    // the reference key's value, e.g. the SKU
	Key    []byte // its encoding, as in LiveQualifier
	// Row is the lookup table's reference row for this key, and Stop ends
	// the range of the lookup rows that point back at referencing rows.
	Row, Stop []byte
	From      []string // the referenced fields copied live
}

// LookupFor finds the lookup table that serves a reference.
func LookupFor(plan *schema.Plan, ent *schema.Entity, ref *schema.Reference) *schema.Table {
	for _, t := range plan.Tables { // not TablesOf: this runs for every state
		if t.HoldsCopiesOf(ent.Name) && t.Role == schema.RoleLookup && t.Reference == ref.Name {
			return t
		}
	}
	return nil
}

// LiveRefs lists the distinct referenced keys of a state whose fields are
// copied live, sorted by reference and key.
func LiveRefs(plan *schema.Plan, ent *schema.Entity, state map[string]any) ([]LiveRef, error) {
	out, err := LiveKeys(plan, ent, state)
	if err != nil {
		return nil, err
	}
	if err := LocateAll(out); err != nil {
		return nil, err
	}
	return out, nil
}

// LiveKeys is LiveRefs without the lookup rows (Row and Stop are nil until
// Locate): enough to compare two states' references, at a fraction of the
// cost, since locating a key works out the lookup key's prefix bounds.
func LiveKeys(plan *schema.Plan, ent *schema.Entity, state map[string]any) ([]LiveRef, error) {
	var out []LiveRef
	for _, ref := range ent.References {
		from := ref.Live
		if len(from) == 0 {
			continue
		}
		lookup := LookupFor(plan, ent, ref)
		if lookup == nil {
			return nil, fmt.Errorf("layout: live copies of %s.%s need a lookup table", ent.Name, ref.Name)
		}
		f := plan.Entity(lookup.Entity).Field(ref.Key)
		if f == nil {
			return nil, fmt.Errorf("layout: reference %s: no field %s", ref.Name, ref.Key)
		}
		start := len(out)
		var scratch [8]any
		vals := refKeyValues(ent, ref, state, scratch[:0])
		out = slices.Grow(out, len(vals))
		// The keys are cut from one buffer, each capped at its length,
		// sized for the usual short keys.
		buf := make([]byte, 0, 32+16*len(vals))
		for _, v := range vals {
			if cap(buf)-len(buf) < 32 {
				buf = make([]byte, 0, max(512, 16*len(vals)))
			}
			k, err := rowkey.AppendValue(buf, f.Type, v)
			if err != nil {
				return nil, fmt.Errorf("layout: reference %s key: %w", ref.Name, err)
			}
			key := k[len(buf):len(k):len(k)]
			buf = k
			dup := false
			for _, o := range out[start:] {
				if string(o.Key) == string(key) {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, LiveRef{Ref: ref, Lookup: lookup, Value: v, Key: key, From: from})
			}
		}
	}
	slices.SortFunc(out, func(a, b LiveRef) int {
		if c := strings.Compare(a.Ref.Name, b.Ref.Name); c != 0 {
			return c
		}
		return bytes.Compare(a.Key, b.Key)
	})
	return out, nil
}

// Locate sets the lookup rows of a reference key LiveKeys listed: its
// reference row and the end of the rows that point back at referencing rows.
func (lr *LiveRef) Locate() error {
	_, err := lr.locateIn(nil)
	return err
}

// LocateAll is Locate for each of refs, their rows cut from one buffer.
func LocateAll(refs []LiveRef) error {
	n := 0
	for i := range refs {
		n += locateRoom(&refs[i])
	}
	buf := make([]byte, 0, n)
	for i := range refs {
		var err error
		if buf, err = refs[i].locateIn(buf); err != nil {
			return err
		}
	}
	return nil
}

// locateRoom is about the bytes a ref's lookup rows take: the reference
// row's key is mostly the encoded reference key, and its stop as long.
func locateRoom(lr *LiveRef) int { return 2*len(lr.Key) + 16 }

// locateIn sets the ref's lookup rows, appended to buf (a new buffer when
// buf is nil), and returns buf with them, to append more after: the rows
// are capped at their lengths, so appending after them leaves them be.
func (lr *LiveRef) locateIn(buf []byte) ([]byte, error) {
	if buf == nil {
		buf = make([]byte, 0, locateRoom(lr))
	}
	row, stop, err := lr.Lookup.Key.AppendPrefixRange(buf, lr.Ref.Key, lr.Value)
	if err != nil {
		return buf, fmt.Errorf("layout: lookup %s by %s: %w", lr.Lookup.Name, lr.Ref.Key, err)
	}
	lr.Row, lr.Stop = row, stop
	// AppendPrefixRange appended the row and then its stop: when they fit
	// in what buf had left, they are its next bytes; otherwise they went
	// to a new array, and buf's own room is still free.
	if used := len(row) + len(stop); cap(buf)-len(buf) >= used {
		buf = buf[:len(buf)+used]
	}
	return buf, nil
}

// NewLiveRef locates one reference key: its encoding and its lookup rows.
func NewLiveRef(plan *schema.Plan, ref *schema.Reference, lookup *schema.Table, value any) (LiveRef, error) {
	ent := plan.Entity(lookup.Entity)
	f := ent.Field(ref.Key)
	if f == nil {
		return LiveRef{}, fmt.Errorf("layout: reference %s: no field %s", ref.Name, ref.Key)
	}
	key, err := rowkey.AppendValue(nil, f.Type, value)
	if err != nil {
		return LiveRef{}, fmt.Errorf("layout: reference %s key: %w", ref.Name, err)
	}
	lr := LiveRef{Ref: ref, Lookup: lookup, Value: value, Key: key, From: ref.Live}
	if err := lr.Locate(); err != nil {
		return LiveRef{}, err
	}
	return lr, nil
}

// refKeyValues appends to out the values of a reference's key field in a
// state: one for an entity field, one per element for a child field.
func refKeyValues(ent *schema.Entity, ref *schema.Reference, state map[string]any, out []any) []any {
	f := ent.Field(ref.Key)
	if f == nil {
		return out
	}
	if f.Child == "" {
		if v, ok := state[ref.Key]; ok && v != nil {
			return append(out, v)
		}
		return out
	}
	elems, _ := state[f.Child].([]map[string]any)
	for _, el := range elems {
		if v, ok := el[f.Name]; ok && v != nil {
			out = append(out, v)
		}
	}
	return out
}

// ReferencesTo lists, over every entity, the references to entity name that
// copy fields live, with the entity holding them.
func ReferencesTo(plan *schema.Plan, name string) []Referrer {
	var out []Referrer
	for _, e := range plan.Entities {
		for _, r := range e.References {
			if r.Entity == name && len(r.Live) > 0 {
				out = append(out, Referrer{Entity: e, Ref: r, Lookup: LookupFor(plan, e, r)})
			}
		}
	}
	return out
}

// Referrer is an entity that copies another's fields live.
type Referrer struct {
	Entity *schema.Entity
	Ref    *schema.Reference
	Lookup *schema.Table
}
