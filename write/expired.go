package write

import (
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/schema"
)

// An event whose version is already past its primary row's TTL when it
// arrives is skipped (Stats.Expired). The store would hide its primary
// cells at once, the pending refs and locations the writer keeps there
// included, so no later event could see the state to delete its copies:
// copies in tables that expire later or never would be left behind, and
// only when the old event came first. A log replayed late (a consumer
// far behind, a backfill) holds such events; skipping them makes the
// outcome the same in any order, as if they had expired in the store.
//
// Versions that are counters under a TTL expire at once (review's
// ttl-with-version-timestamps is an error for that), and are skipped too.
//
// A copy in a table that expires is written again with every version of
// its entity, even when the new state leaves it as it was (mutations.go):
// it must expire with the newest version, not the one that wrote it first.

// lifetimes gives, per entity whose primary table has a family that
// expires every version of a column (a TTL without MIN_VERSIONS), the
// shortest such TTL in milliseconds: past it, part of the stored state is
// gone.
func lifetimes(plan *schema.Plan) map[string]int64 {
	out := map[string]int64{}
	for _, e := range plan.Entities {
		prim := plan.Primary(e.Name)
		if prim == nil {
			continue
		}
		for _, f := range prim.Families {
			ttl := f.TTL.Milliseconds()
			if ttl <= 0 || f.MinVersions > 0 {
				continue
			}
			if cur, ok := out[e.Name]; !ok || ttl < cur {
				out[e.Name] = ttl
			}
		}
	}
	return out
}

// expired reports whether ev's version is past its primary row's TTL at
// now: the store would not show its cells (a cell is hidden once its
// timestamp is before now minus the TTL).
func (w *Writer) expired(ev *event.Event, now int64) bool {
	ttl, ok := w.lifetime[ev.Entity]
	return ok && ev.Version < now-ttl
}

// expiring gives the tables with a family that expires every version of a
// column: a cell there outlives its version by the TTL only.
func expiring(plan *schema.Plan) map[string]bool {
	out := map[string]bool{}
	for _, t := range plan.Tables {
		for _, f := range t.Families {
			if f.TTL > 0 && f.MinVersions == 0 {
				out[t.Name] = true
			}
		}
	}
	return out
}
