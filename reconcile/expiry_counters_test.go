package reconcile

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// TestCountersOfExpiredEntities pins down what the job makes of counters
// whose entity's primary rows expire (docs/reconcile.md, "Time to live";
// review's ttl-bounded-counter). One ticket of write/testdata/tickets.yaml
// is counted, the clock moves past the primary table's TTL, and the
// ticket is written again or not:
//
//   - in mode exact the expired ticket's contributions are orphans, and
//     the ticket written again overwrites them: nothing to repair;
//   - in mode bounded the totals keep the expired ticket's count, which
//     the job finds drifted, and the ticket written again is counted on
//     top of it, which the job finds drifted too.
//
// Either way a repair leaves the counters as the live tickets make them.
func TestCountersOfExpiredEntities(t *testing.T) {
	ctx := context.Background()
	src, err := os.ReadFile("../write/testdata/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode              string
		again             bool
		orphaned, drifted int64
	}{
		{"exact", false, 2, 0},
		{"exact", true, 0, 0},
		{"bounded", false, 0, 2},
		{"bounded", true, 0, 2},
	} {
		t.Run(fmt.Sprintf("%s/again=%v", tc.mode, tc.again), func(t *testing.T) {
			text := strings.ReplaceAll(string(src), "mode: exact", "mode: "+tc.mode)
			p, err := schema.Parse("tickets.yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			var now atomic.Int64
			now.Store(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).UnixMilli())
			st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, Clock: now.Load, MemTableSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := ddl.Create(ctx, st, p); err != nil {
				t.Fatal(err)
			}
			w := write.New(p, st, write.Options{Clock: now.Load})
			opened := now.Load() - time.Hour.Milliseconds()
			// Two counters count the ticket: daily_counts (one) and
			// tag_weights (its urgent tag's weight).
			ticket := func(offset int64) *event.Event {
				line := fmt.Sprintf(`{"entity":"ticket","key":{"tenant":"t1","ticketId":7},"version":%d,"state":{"tenant":"t1","ticketId":7,"queue":"q1","openedAt":%d,"urgent":true,"tags":[{"tag":"a","weight":5}]}}`, now.Load()-1000, opened)
				ev, err := event.Decode(p, []byte(line))
				if err != nil {
					t.Fatal(err)
				}
				ev.Stream, ev.Offset = "log", offset
				return ev
			}
			apply := func(ev *event.Event) {
				t.Helper()
				if _, rej, err := w.Apply(ctx, []*event.Event{ev}); err != nil || len(rej) > 0 {
					t.Fatalf("apply: %v %v", err, rej)
				}
			}
			apply(ticket(0))
			if rep := run(t, ctx, p, st, Options{DryRun: true, Clock: now.Load}); rep.Differences() != 0 {
				t.Fatalf("before the TTL:\n%s", reportText(t, rep))
			}
			now.Add((31 * 24 * time.Hour).Milliseconds())
			if tc.again {
				apply(ticket(100))
			}
			rep := run(t, ctx, p, st, Options{DryRun: true, Clock: now.Load})
			if c := rep.kind("counter"); c.Orphaned != tc.orphaned || c.Drifted != tc.drifted {
				t.Fatalf("counters: %d orphaned, %d drifted; want %d and %d:\n%s", c.Orphaned, c.Drifted, tc.orphaned, tc.drifted, reportText(t, rep))
			}
			run(t, ctx, p, st, Options{PurgeMarkers: true, Clock: now.Load})
			// Clean, and the ticket written again still counted.
			after := run(t, ctx, p, st, Options{DryRun: true, Clock: now.Load})
			if after.Differences() != 0 || tc.again && after.kind("counter").Valid == 0 {
				t.Fatalf("after a repair:\n%s", reportText(t, after))
			}
		})
	}
}
