package testenv

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Interleave mixes the entities of a log and keeps each entity's events in
// order, as a log whose producers write one entity at a time would;
// entityOf names an event's entity (EntityOf(p) for any schema).
func Interleave(r *rand.Rand, evs []*event.Event, entityOf func(*event.Event) string) []*event.Event {
	queues := map[string][]*event.Event{}
	var keys []string
	for _, e := range evs {
		k := entityOf(e)
		if queues[k] == nil {
			keys = append(keys, k)
		}
		queues[k] = append(queues[k], e)
	}
	var out []*event.Event
	for len(keys) > 0 {
		i := r.Intn(len(keys))
		k := keys[i]
		out = append(out, queues[k][0])
		queues[k] = queues[k][1:]
		if len(queues[k]) == 0 {
			keys = slices.Delete(keys, i, i+1)
		}
	}
	return out
}

// EntityOf names an event's entity by its schema key.
func EntityOf(p *schema.Plan) func(*event.Event) string {
	return func(e *event.Event) string { return e.Entity + "\x00" + e.KeyString(p.Entity(e.Entity).Key) }
}

// EachRow calls fn with every row of a table in key order (a row is valid
// until fn returns) and fails the test when the scan fails.
func EachRow(t testing.TB, ctx context.Context, st store.Store, table string, fn func(store.Row)) {
	t.Helper()
	sc, err := st.Scan(ctx, table, store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for sc.Next(ctx) {
		fn(sc.Row())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// History makes, for every entity of p with a primary table, a few
// entities of up to five versions each: every field drawn from a small set
// of values of its type (so that copies collide and move between rows),
// fields now and then absent, child lists of up to three elements, deletes
// and re-creations after them. A field of the primary row key outside the
// entity key changes now and then when the entity has a locator, and a
// delete names the row it knows of (the current one, the first one, or,
// with a locator, none). Entities only referenced get upserts and deletes
// at versions of their own. Events go through event.Decode as JSON lines,
// as a log's do.
func History(tb testing.TB, r *rand.Rand, p *schema.Plan, o HistoryOptions) []*event.Event {
	tb.Helper()
	g := &historyGen{tb: tb, r: r, p: p, now: o.Now, wall: o.WallClock, keys: max(3, o.Entities)}
	entities := o.Entities
	var lines []map[string]any
	for _, ent := range p.Entities {
		if p.Primary(ent.Name) == nil {
			if len(layout.ReferencesTo(p, ent.Name)) > 0 {
				lines = append(lines, g.referenced(ent)...)
			}
			continue
		}
		lines = append(lines, g.owned(ent, entities)...)
	}
	evs := make([]*event.Event, 0, len(lines))
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			tb.Fatal(err)
		}
		ev, err := event.Decode(p, b)
		if err != nil {
			tb.Fatalf("generated event refused by the decoder: %v\n%s", err, b)
		}
		evs = append(evs, ev)
	}
	return evs
}

// HistoryOptions say what a History holds.
type HistoryOptions struct {
	// Entities is how many entities of each entity with a primary table.
	Entities int
	// Now is the time the store will measure TTLs against.
	Now int64
	// WallClock: the store's clock moves on while the history is applied,
	// so no version comes within seconds of a TTL; those past one are
	// past it by a day.
	WallClock bool
}

type historyGen struct {
	tb   testing.TB
	r    *rand.Rand
	p    *schema.Plan
	now  int64
	wall bool
	// keys is how many values each field of an entity key takes.
	keys int
}

// version is the i-th version (from 1) of an entity: a counter, or epoch
// milliseconds a second apart from base.
func (g *historyGen) version(ent *schema.Entity, base int64, i int) int64 {
	if ent.VersionKind == schema.VersionEpochMillis {
		return base + int64(i)*1000
	}
	return int64(i)
}

// base is where an entity's epoch-millisecond versions start: an hour
// before now, or, for one entity in three, so that a TTL of one of its
// tables' families passes between its second and third version. A log
// replayed late holds such events; the store (whose clock stands still in
// these tests) hides their cells at once, the writer's bookkeeping cells in
// the primary row included.
func (g *historyGen) base(ent *schema.Entity) int64 {
	var ttls []int64
	for _, t := range g.p.Tables {
		if t.Entity != ent.Name {
			continue
		}
		for _, f := range t.Families {
			if f.TTL > 0 {
				ttls = append(ttls, f.TTL.Milliseconds())
			}
		}
	}
	if len(ttls) == 0 || g.r.Intn(3) > 0 {
		return g.now - 3_600_000
	}
	if g.wall {
		return g.now - ttls[g.r.Intn(len(ttls))] - 86_400_000
	}
	return g.now - ttls[g.r.Intn(len(ttls))] - 2500
}

func (g *historyGen) owned(ent *schema.Entity, entities int) []map[string]any {
	prim := g.p.Primary(ent.Name)
	locator := g.p.Locator(ent.Name) != nil
	var mobile []string // primary row key fields outside the entity key
	for _, f := range prim.Key.Fields() {
		if !slices.Contains(ent.Key, f) {
			mobile = append(mobile, f)
		}
	}
	var out []map[string]any
	seen := map[string]bool{}
	for e := 0; e < entities; e++ {
		key := map[string]any{}
		for try := 0; ; try++ {
			for _, k := range ent.Key {
				key[k] = g.value(ent, ent.Field(k), true)
			}
			if s := fmt.Sprint(key); !seen[s] || try > 50 {
				seen[s] = true
				break
			}
		}
		state := func(prev map[string]any) map[string]any {
			st := map[string]any{}
			for k, v := range key {
				st[k] = v
			}
			for _, f := range ent.Fields {
				switch {
				case slices.Contains(ent.Key, f.Name):
				case slices.Contains(mobile, f.Name):
					if prev != nil && (!locator || g.r.Intn(4) > 0) {
						st[f.Name] = prev[f.Name]
					} else {
						st[f.Name] = g.value(ent, f, true)
					}
				case !g.required(ent, f) && g.r.Intn(5) == 0: // absent
				default:
					st[f.Name] = g.value(ent, f, false)
				}
			}
			for _, c := range ent.Children {
				if g.r.Intn(4) == 0 {
					continue
				}
				var list []map[string]any
				keys := map[string]bool{}
				for i := 0; i < g.r.Intn(4); i++ {
					el := map[string]any{}
					for _, f := range c.Fields {
						switch {
						case f.Name == c.Key:
							el[f.Name] = g.value(ent, f, true)
						case !g.required(ent, f) && g.r.Intn(5) == 0:
						default:
							el[f.Name] = g.value(ent, f, false)
						}
					}
					if k := fmt.Sprint(el[c.Key]); !keys[k] && len(list) < c.Max {
						keys[k] = true
						list = append(list, el)
					}
				}
				st[c.Name] = list
			}
			return st
		}
		var cur, first map[string]any
		base := g.base(ent)
		n := 1 + g.r.Intn(5)
		for v := 1; v <= n; v++ {
			ev := map[string]any{
				"id":      fmt.Sprintf("%s-%v-v%d", ent.Name, key, v),
				"entity":  ent.Name,
				"key":     key,
				"version": g.version(ent, base, v),
			}
			if len(ent.Key) == 1 {
				ev["key"] = key[ent.Key[0]]
			}
			if v > 1 && g.r.Intn(6) == 0 {
				ev["op"] = "delete"
				var from map[string]any
				switch g.r.Intn(3) {
				case 0:
					from = cur
				case 1:
					from = first
				default:
					if !locator {
						from = cur
					}
				}
				if from != nil && len(mobile) > 0 {
					hints := map[string]any{}
					for _, f := range mobile {
						hints[f] = from[f]
					}
					ev["hints"] = hints
				}
				out = append(out, ev)
				continue
			}
			cur = state(cur)
			if first == nil {
				first = cur
			}
			ev["state"] = cur
			out = append(out, ev)
		}
	}
	return out
}

// required reports whether a row key of one of the entity's tables reads
// the field, unless the table holds only entities that set it (when): an
// event without it is refused, as no row key can be made.
func (g *historyGen) required(ent *schema.Entity, f *schema.Field) bool {
	for _, t := range g.p.Tables {
		if t.Entity == ent.Name && t.When != f.Path && slices.Contains(t.Key.Fields(), f.Path) {
			return true
		}
	}
	return false
}

// referenced makes the events of an entity that others copy from: up to
// four versions of each of three keys, upserts with fields now and then
// absent, and deletes.
func (g *historyGen) referenced(ent *schema.Entity) []map[string]any {
	var out []map[string]any
	for k := 0; k < 3; k++ {
		if g.r.Intn(3) == 0 {
			continue
		}
		key := refKey(ent.Name, k)
		base := g.base(ent)
		for v := 1; v <= 1+g.r.Intn(4); v++ {
			ev := map[string]any{
				"id":      fmt.Sprintf("%s-%s-v%d", ent.Name, key, v),
				"entity":  ent.Name,
				"key":     key,
				"version": g.version(ent, base, v),
			}
			if v > 1 && g.r.Intn(4) == 0 {
				ev["op"] = "delete"
			} else {
				st := map[string]any{ent.Key[0]: key}
				for _, f := range ent.Fields {
					if f.Name != ent.Key[0] && g.r.Intn(5) > 0 {
						// Values repeat across versions now and then: a
						// change that rewrites no copy.
						st[f.Name] = refValue(f, v/2, key)
					}
				}
				ev["state"] = st
			}
			out = append(out, ev)
		}
	}
	return out
}

// refValue is the n-th value of a field of the referenced entity with key
// key: a string that names both, or a number that differs by key and n.
func refValue(f *schema.Field, n int, key string) any {
	k := int(key[len(key)-1])
	switch f.Type {
	case rowkey.Int32:
		return int32(100*k + n)
	case rowkey.Int64, rowkey.Timestamp:
		return int64(1000*k+n) * 7
	case rowkey.Float64:
		return float64(k) + float64(n)/4
	case rowkey.Bool:
		return n%2 == 1
	}
	return fmt.Sprintf("%s %d of %s", f.Name, n, key)
}

// refKey is the k-th key of a referenced entity (which has one key field,
// a string in these schemas).
func refKey(entity string, k int) string { return fmt.Sprintf("%s-%d", entity, k) }

// value draws a field's value. Keys (of the entity, of a child element, of
// the primary row) come from three values; other fields from a few,
// including the zero value, which partial tables (when) treat as unset.
// A field holding a reference's key takes one of the referenced entity's
// keys, or one no event names.
func (g *historyGen) value(ent *schema.Entity, f *schema.Field, key bool) any {
	for _, ref := range ent.References {
		if ref.Key == f.Path {
			return refKey(ref.Entity, g.r.Intn(4))
		}
	}
	pick := func(n int) int { return g.r.Intn(n) }
	switch f.Type {
	case rowkey.String:
		if key {
			return fmt.Sprintf("%s%d", f.Name, pick(g.keys))
		}
		return []string{"", "x", "yy", "snapshot"}[pick(4)]
	case rowkey.Int32:
		if key {
			return 1 + pick(g.keys)
		}
		return []int32{0, 1, -7, 300}[pick(4)]
	case rowkey.Int64:
		if key {
			return int64(1 + pick(g.keys))
		}
		return []int64{0, 5, -5, 1 << 40}[pick(4)]
	case rowkey.Timestamp:
		// Days before the versions, so that day() parts differ.
		return g.now - int64(pick(3))*86_400_000 - int64(pick(1000))
	case rowkey.Bool:
		return pick(2) == 0
	case rowkey.Float64:
		if key {
			return float64(pick(g.keys)) + 0.5
		}
		return []float64{0, 1.5, -2.25, 1e300}[pick(4)]
	case rowkey.Bytes:
		return base64.StdEncoding.EncodeToString([][]byte{{}, {0}, {'a', 0xff}}[pick(3)])
	}
	g.tb.Fatalf("history: no values for field %s of type %v", f.Path, f.Type)
	return nil
}
