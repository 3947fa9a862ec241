package layout

import (
	"bytes"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// A locator row (schema.RoleLocator) is keyed by the entity key alone and
// holds, in its first family:
//
//	'l' + primary row key   one cell per row the entity may live in,
//	                        timestamp the version that placed it there
//	QualTombstone           timestamp the version of the entity's last delete
//
// A move adds the new row before writing it and removes the old one only
// after the old row is emptied and its copies deleted, so that a crash at
// any point leaves every row that may hold the entity (or copies to delete)
// listed. Normally one row is. The qualifiers are the writer's own: a
// locator has no schema columns, so nothing can collide with them.

// locationMark starts every location qualifier.
const locationMark = 'l'

// LocationQualifier is the locator qualifier naming one primary row.
func LocationQualifier(primaryKey []byte) []byte {
	return append([]byte{locationMark}, primaryKey...)
}

// Location is one primary row a locator lists.
type Location struct {
	Key     []byte
	Version int64 // the version that placed the entity there
}

// Listed reports whether at lists the primary row key.
func Listed(at []Location, key []byte) bool {
	for _, x := range at {
		if bytes.Equal(x.Key, key) {
			return true
		}
	}
	return false
}

// ReadLocation decodes a locator row: the primary rows the entity may live
// in, and the version of its last delete (0 when none).
func ReadLocation(t *schema.Table, row store.Row) (at []Location, tomb int64) {
	fam := BookFamily(t)
	for _, c := range row.Cells {
		if c.Family != fam {
			continue
		}
		switch {
		case bytes.Equal(c.Qualifier, QualTombstone):
			tomb = c.Timestamp
		case len(c.Qualifier) > 1 && c.Qualifier[0] == locationMark:
			at = append(at, Location{Key: c.Qualifier[1:], Version: c.Timestamp})
		}
	}
	return at, tomb
}

// LocatorRow is the locator row (of table loc) of the entity living at
// primary row pk of table prim: a locator key is built from the entity
// key alone, which every primary key holds.
func LocatorRow(prim, loc *schema.Table, pk []byte) ([]byte, error) {
	vals, err := prim.Key.DecodeValues(pk)
	if err != nil {
		return nil, err
	}
	return loc.Key.Encode(vals)
}
