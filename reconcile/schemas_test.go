package reconcile

import (
	"bytes"
	"context"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// TestSchemas runs reconcile on stores the writer made from histories of
// schemas other than the orders example (testenv.History: composite keys,
// partial tables, TTLs with versions on both sides of them, two references
// to one entity). A store the writer made must hold no difference; with one
// copy row deleted, a repair must bring back exactly what was there.
func TestSchemas(t *testing.T) {
	now := time.Now().UnixMilli()
	var at atomic.Int64 // the clock of the store, the writer and the job
	at.Store(now)
	n := 200
	if raceEnabled {
		n = 10
	}
	for _, file := range []string{"../examples/device_events.yaml", "../write/testdata/tickets.yaml"} {
		p, err := schema.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Name, func(t *testing.T) {
			repaired := 0
			for h := 0; h < n; h++ {
				if reconcileHistory(t, p, int64(20261206+h), now, &at) {
					repaired++
				}
			}
			if n >= 100 && repaired < n/4 {
				t.Errorf("only %d of %d histories left a copy row to delete and repair", repaired, n)
			}
		})
	}
}

// reconcileHistory checks one history of TestSchemas; it reports whether
// the store held a copy row to delete and repair.
func reconcileHistory(t *testing.T, p *schema.Plan, seed, now int64, at *atomic.Int64) bool {
	ctx := context.Background()
	clock := at.Load
	defer at.Store(now)
	r := rand.New(rand.NewSource(seed))
	evs := testenv.Interleave(r, testenv.History(t, r, p, testenv.HistoryOptions{Entities: 1 + r.Intn(4), Now: now}), testenv.EntityOf(p))
	// A small memtable: Pebble sets aside room for its log in each store
	// (71 MB at the default size), and the test's stores stay until it ends.
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: clock, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := ddl.Create(ctx, st, p); err != nil {
		t.Fatal(err)
	}
	w := write.New(p, st, write.Options{Clock: clock})
	for off := 0; off < len(evs); {
		end := min(off+1+r.Intn(6), len(evs))
		apply(t, ctx, w, evs[off:end])
		off = end
	}
	before := snapshot(t, ctx, st, p)
	if rep := run(t, ctx, p, st, Options{DryRun: true, Clock: clock}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: the writer's store has differences:\n%s", p.Name, seed, reportText(t, rep))
	}

	// Delete one row of a copy table, drawn from what the store shows. A
	// lookup table's reference rows are left alone: they are the only
	// record of an entity without a primary table, and nothing could
	// repair them.
	type victim struct {
		tbl *schema.Table
		row store.Row
	}
	var rows []victim
	for _, tbl := range p.Tables {
		if tbl.Role != schema.RoleIndex && tbl.Role != schema.RoleLookup && tbl.Role != schema.RoleCounter {
			continue
		}
		eachRow(t, ctx, st, tbl.Name, func(row store.Row) {
			for _, c := range row.Cells {
				if bytes.Equal(c.Qualifier, layout.QualRefState) {
					return
				}
			}
			rows = append(rows, victim{tbl, row})
		})
	}
	if len(rows) == 0 {
		return false
	}
	pick := rows[r.Intn(len(rows))]
	tbl, row := pick.tbl, pick.row
	var ms []store.Mutation
	for _, f := range tbl.Families {
		ms = append(ms, store.Mutation{Kind: store.DeleteFamily, Family: f.Name, Timestamp: newest(row)})
	}
	mutate(t, ctx, st, tbl.Name, row.Key, ms...)
	if rep := run(t, ctx, p, st, Options{PurgeMarkers: true, Clock: clock}); rep.Differences() == 0 || rep.Failed() != 0 {
		t.Fatalf("%s seed %d: row %s of %s deleted; the repair found %d differences and failed %d:\n%s", p.Name, seed, store.Printable(row.Key), tbl.Name, rep.Differences(), rep.Failed(), reportText(t, rep))
	}
	// A repair puts a cell at the entity's version, where the writer may
	// have left an unchanged copy at the version that first wrote it: the
	// values must be back, not the timestamps.
	if d := testenv.DiffLines(untimed(snapshot(t, ctx, st, p), ""), untimed(before, "")); d != "" {
		t.Fatalf("%s seed %d: row %s of %s deleted and repaired; the store differs from before:\n%s", p.Name, seed, store.Printable(row.Key), tbl.Name, d)
	}
	if rep := run(t, ctx, p, st, Options{DryRun: true, Clock: clock}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: differences after the repair:\n%s", p.Name, seed, reportText(t, rep))
	}
	expireAll(t, ctx, p, st, seed, at)
	return true
}

// expireAll moves the clock past every TTL of p: entities whose primary
// table expires are gone, and a repair must delete their copies in tables
// that keep cells longer (ttl-copy-outlives-primary), leaving no
// difference.
func expireAll(t *testing.T, ctx context.Context, p *schema.Plan, st store.Store, seed int64, at *atomic.Int64) {
	var longest time.Duration
	for _, tbl := range p.Tables {
		for _, f := range tbl.Families {
			longest = max(longest, f.TTL)
		}
	}
	if longest == 0 {
		return
	}
	at.Add((longest + 24*time.Hour).Milliseconds())
	run(t, ctx, p, st, Options{PurgeMarkers: true, Clock: at.Load})
	if rep := run(t, ctx, p, st, Options{DryRun: true, Clock: at.Load}); rep.Differences() != 0 {
		t.Fatalf("%s seed %d: past every TTL, differences after a repair:\n%s", p.Name, seed, reportText(t, rep))
	}
	for _, tbl := range p.Tables {
		if tbl.Role != schema.RoleIndex && tbl.Role != schema.RoleLookup || p.Primary(tbl.Entity).Families[0].TTL == 0 {
			continue
		}
		eachRow(t, ctx, st, tbl.Name, func(row store.Row) {
			for _, c := range row.Cells {
				if bytes.Equal(c.Qualifier, layout.QualRefState) {
					return // a reference row: no primary row holds it
				}
			}
			t.Fatalf("%s seed %d: past every TTL, %s still holds row %s", p.Name, seed, tbl.Name, store.Printable(row.Key))
		})
	}
}

// newest is the newest timestamp among a row's cells.
func newest(row store.Row) int64 {
	var ts int64
	for _, c := range row.Cells {
		ts = max(ts, c.Timestamp)
	}
	return ts
}

func reportText(t testing.TB, rep *Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// eachRow calls fn with a copy of every row of table.
func eachRow(t testing.TB, ctx context.Context, st store.Store, table string, fn func(store.Row)) {
	t.Helper()
	testenv.EachRow(t, ctx, st, table, func(row store.Row) { fn(copyRow(row)) })
}
