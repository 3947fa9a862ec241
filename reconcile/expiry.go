package reconcile

import (
	"time"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
)

// A copy the writer put at version v in a family with a TTL is hidden by
// the store once v is older than now minus the TTL. The writer puts such
// copies all the same when the primary row outlives them (its TTL is
// longer, or it has none: docs/writer.md, "Time to live"), so the job does
// not expect them: it would report them missing run after run, and a
// repair at v would be hidden as soon as it landed. Only families that
// drop every version past the TTL count (no MIN_VERSIONS).

// lifetimes maps table and family to the TTL in milliseconds of every
// family that expires all versions of a cell.
func lifetimes(sp *schema.Plan) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for _, t := range sp.Tables {
		for _, f := range t.Families {
			if f.TTL <= 0 || f.MinVersions > 0 {
				continue
			}
			if out[t.Name] == nil {
				out[t.Name] = map[string]int64{}
			}
			out[t.Name][f.Name] = f.TTL.Milliseconds()
		}
	}
	return out
}

// clockOf is opts.Clock, or the system clock.
func clockOf(opts Options) func() int64 {
	if opts.Clock != nil {
		return opts.Clock
	}
	return func() int64 { return time.Now().UnixMilli() }
}

// unexpired drops from items, in place, the cells a store hides already
// when put at v, and the items left without cells.
func (j *job) unexpired(items []layout.Item, v int64) []layout.Item {
	if len(j.ttl) == 0 {
		return items
	}
	out := items[:0]
	for _, it := range items {
		fams := j.ttl[it.Table]
		if fams != nil {
			cells := it.Cells[:0]
			for _, c := range it.Cells {
				if ttl, ok := fams[c.Family]; !ok || v >= j.now-ttl {
					cells = append(cells, c)
				}
			}
			if it.Cells = cells; len(cells) == 0 {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}
