package layout

import (
	"bytes"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// A locator row (schema.RoleLocator) is keyed by the entity key alone and
// holds, in its first family:
//
//	QualLocation   the primary row key the entity was last placed in,
//	               timestamp the version that placed it there
//	QualTombstone  timestamp the version of the entity's last delete
//
// The location is written only when it changes, so its timestamp is not
// the entity's version; the primary rows hold that. Both qualifiers are
// the writer's own: a locator has no schema columns, so nothing can
// collide with them.

// QualLocation is the locator cell naming the entity's primary row.
var QualLocation = []byte("l")

// ReadLocation decodes a locator row: the primary row key the entity was
// last placed in (nil when none) with the version that placed it, and the
// version of its last delete (0 when none).
func ReadLocation(t *schema.Table, row store.Row) (at []byte, atVersion, tomb int64) {
	fam := BookFamily(t)
	for _, c := range row.Cells {
		if c.Family != fam {
			continue
		}
		switch {
		case bytes.Equal(c.Qualifier, QualLocation):
			at, atVersion = c.Value, c.Timestamp
		case bytes.Equal(c.Qualifier, QualTombstone):
			tomb = c.Timestamp
		}
	}
	return at, atVersion, tomb
}
