package write

import (
	"context"
	"fmt"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// location is what an entity's locator row says.
type location struct {
	table *schema.Table
	row   []byte // the locator row (the encoded entity key)
	// at is the primary row the entity was last placed in, nil when none;
	// atVersion the version that placed it there.
	at        []byte
	atVersion int64
	// tomb is the version of the entity's last delete, 0 when none.
	tomb int64
}

// readLocation reads the locator row of the entity an event key names.
func (w *Writer) readLocation(ctx context.Context, lt *schema.Table, key map[string]any) (*location, error) {
	row, err := lt.Key.Encode(key)
	if err != nil {
		return nil, fmt.Errorf("write: locator key of %s: %w", lt.Entity, err)
	}
	r, err := w.st.Get(ctx, lt.Name, store.Get{Row: row})
	if err != nil {
		return nil, fmt.Errorf("write: read locator row %s of %s: %w", store.Printable(row), lt.Name, err)
	}
	loc := &location{table: lt, row: row}
	loc.at, loc.atVersion, loc.tomb = layout.ReadLocation(lt, r)
	return loc, nil
}

// locatorMutations keeps the locator in step with what the entity plan
// writes: the row the entity now lives in, and its delete.
func (w *Writer) locatorMutations(ep *entityPlan, stats *Stats) []store.Mutation {
	loc := ep.g.loc
	if loc == nil {
		return nil
	}
	fam := layout.BookFamily(loc.table)
	var ms []store.Mutation
	if ep.deleted {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.QualTombstone, Timestamp: ep.version})
	} else if ep.key != nil && (loc.at == nil || string(loc.at) != string(ep.key)) {
		ms = append(ms, store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.QualLocation, Timestamp: ep.version, Value: ep.key})
	}
	stats.Cells[loc.table.Name] += len(ms)
	return ms
}
