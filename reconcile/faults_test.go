package reconcile

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/faults"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// wantOf turns injected faults into the counts a report must show.
func wantOf(in map[string]*faults.Counts) map[string]Counts {
	out := map[string]Counts{}
	for k, c := range in {
		out[k] = Counts{Missing: c.Missing, Stale: c.Stale, Orphaned: c.Orphaned, Drifted: c.Drifted}
	}
	return out
}

// maskedOf is what a repair cannot fix until the markers are purged: the
// masked faults, as missing copies.
func maskedOf(in map[string]*faults.Counts) (map[string]Counts, int64) {
	out := map[string]Counts{}
	var n int64
	for k, c := range in {
		out[k] = Counts{Missing: c.Masked}
		n += c.Masked
	}
	return out, n
}

// runParts plans n parts, runs each into a results directory, and merges.
func runParts(t *testing.T, ctx context.Context, sp *schema.Plan, st store.Store, n int, opts Options) *Report {
	t.Helper()
	p, err := NewPlan(ctx, sp, st, PlanOptions{Parts: n, Since: opts.Since, RangeRows: 200})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := 0; i < n; i++ {
		res, err := RunPart(ctx, sp, st, p, i, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := WritePartial(dir, res); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := ReadPartials(filepath.Clean(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != n {
		t.Fatalf("%d partial results, want %d", len(parts), n)
	}
	rep, err := Merge(ctx, sp, st, p, parts, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// faultRoundTrip injects every kind of fault and checks that the
// single-process job and plan/run/merge in several parts each find exactly
// those, that a repair fixes all but the masked ones and reports those
// failed with their cause, and (where the store purges markers) that a
// repair with PurgeMarkers then leaves the store as the writer did.
func faultRoundTrip(t *testing.T, sp *schema.Plan, st store.Store, purges bool) {
	if raceEnabled {
		t.Skip("run without -race (scripts/test.sh): minutes under the race detector")
	}
	ctx := context.Background()
	// Price changes keep the copied names: refreshed in a later batch than
	// the name's version, they rewrite no order, and the copies must still
	// read as valid.
	evs := genEvents(t, sp, gen.OrdersOptions{Events: 900, Seed: 3, SKUs: 30, Renames: 0.1, PriceChanges: 0.1, Deletes: 0.05})
	w := write.New(sp, st, write.Options{})
	for off := 0; off < len(evs); off += 100 {
		apply(t, ctx, w, evs[off:min(off+100, len(evs))])
	}
	fast := sp.Table("daily_units").Counter.Mode == schema.CounterFast
	if fast {
		run(t, ctx, sp, st, Options{}) // fast mode may drift by design: start exact
	}
	if rep := run(t, ctx, sp, st, Options{DryRun: true}); rep.Differences() != 0 || rep.Rows == 0 {
		t.Fatalf("the writer's own output has differences:\n%s", text(rep))
	}
	before := snapshot(t, ctx, st, sp)
	in, err := faults.Inject(ctx, sp, st, faults.Options{Purges: purges})
	if err != nil {
		t.Fatal(err)
	}
	want := wantOf(in)
	checkCounts(t, "dry run", run(t, ctx, sp, st, Options{DryRun: true}), want)
	for _, n := range []int{2, 5} {
		checkCounts(t, "plan/run/merge dry run", runParts(t, ctx, sp, st, n, Options{DryRun: true}), want)
	}
	checkCounts(t, "--shard 1/3 + 0/3 + 2/3", shardsSum(t, ctx, sp, st, 3), want)
	// One range per diff group: the groups' findings add up the same.
	small := run(t, ctx, sp, st, Options{DryRun: true, DiffCells: 1, Plan: PlanOptions{RangeRows: 300}})
	checkCounts(t, "dry run, one range per diff pass", small, want)
	if small.Ranges.Unequal < 3 {
		t.Fatalf("%d unequal ranges: the faults should spread over more", small.Ranges.Unequal)
	}
	// One range per table (cut from the stored rows), each too large for
	// one diff: diffed in slices, which find the same. (On the embedded
	// store only: slicing is the job's logic over the same reads, and each
	// slice is one more scan of the primary table, slow through Thrift.)
	if purges {
		sliced := run(t, ctx, sp, st, Options{DryRun: true, DiffCells: 3000, Plan: PlanOptions{RangeRows: 1 << 20}})
		checkCounts(t, "dry run, ranges diffed in slices", sliced, want)
		if sliced.RowsRead[sp.Primary("order").Name] < 4*sliced.Rows {
			t.Fatalf("the sliced run read %v for %d orders: no range was sliced", sliced.RowsRead, sliced.Rows)
		}
	}
	masked, nMasked := maskedOf(in)
	fix := run(t, ctx, sp, st, Options{})
	checkCounts(t, "repair", fix, want)
	if fix.Failed() != nMasked {
		t.Fatalf("%d repairs failed, %d were masked by markers:\n%s", fix.Failed(), nMasked, text(fix))
	}
	for _, f := range fix.Failures {
		if !strings.Contains(f.Cause, "masked by a delete marker") {
			t.Errorf("failure %+v: cause does not name the marker", f)
		}
	}
	if got := fix.After(); got != nMasked {
		t.Errorf("after the repair %d differences, want the %d masked", got, nMasked)
	}
	checkCounts(t, "dry run after the repair", run(t, ctx, sp, st, Options{DryRun: true}), masked)
	if !purges {
		return
	}
	purged := run(t, ctx, sp, st, Options{PurgeMarkers: true})
	checkCounts(t, "repair with purge", purged, masked)
	if purged.Failed() != 0 {
		t.Fatalf("repairs failed after the purge:\n%s", text(purged))
	}
	if again := run(t, ctx, sp, st, Options{DryRun: true}); again.Differences() != 0 {
		t.Fatalf("differences after the repair:\n%s", text(again))
	}
	after := snapshot(t, ctx, st, sp)
	if fast {
		// Increments and sets stamp totals with the store's clock.
		before, after = untimed(before, "daily_units "), untimed(after, "daily_units ")
	}
	if d := testenv.DiffLines(before, after); d != "" {
		t.Fatalf("the repaired store differs from the writer's:\n%s", d)
	}
}

var stamp = regexp.MustCompile(` @[0-9]+ = `)

// untimed drops the timestamps of the snapshot lines with prefix.
func untimed(lines []string, prefix string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			l = stamp.ReplaceAllString(l, " = ")
		}
		out[i] = l
	}
	return out
}

// shardsSum runs --shard i/n for every i and adds the reports.
func shardsSum(t *testing.T, ctx context.Context, sp *schema.Plan, st store.Store, n int) *Report {
	sum := newReport(true)
	for i := 0; i < n; i++ {
		sum.Add(run(t, ctx, sp, st, Options{DryRun: true, Shard: Shard{I: i, N: n}, Plan: PlanOptions{RangeRows: 300}}))
	}
	return sum
}

func TestFaultsEveryKind(t *testing.T) {
	for _, fast := range []bool{false, true} {
		name := map[bool]string{false: "exact", true: "fast"}[fast]
		t.Run(name, func(t *testing.T) {
			sp := loadPlan(t, fast)
			faultRoundTrip(t, sp, openStore(t, sp), true)
		})
	}
}

// A reference deleted (its state cell says so, its value is gone) whose
// copies were not masked: every order still showing a copy of it is stale,
// and the repair masks the copies at the delete's version.
func TestLiveCopiesOfADeletedReference(t *testing.T) {
	ctx := context.Background()
	sp := loadPlan(t, false)
	st := openStore(t, sp)
	apply(t, ctx, write.New(sp, st, write.Options{}), genEvents(t, sp, gen.OrdersOptions{Events: 600, Seed: 12, SKUs: 15, Renames: 0.2}))
	ents := primaries(t, ctx, st, sp)
	ent := sp.Entity("order")
	// The reference row of the first live copy found.
	var target layout.LiveRef
	for _, e := range ents {
		refs, err := layout.LiveRefs(sp, ent, e.state.Values)
		if err != nil {
			t.Fatal(err)
		}
		for _, lr := range refs {
			if _, ok := e.state.Live.Get(layout.LiveQualifier(lr.Ref, lr.Key, lr.From[0])); ok && target.Row == nil {
				target = lr
			}
		}
	}
	if target.Row == nil {
		t.Fatal("no live copy to work on")
	}
	fam := target.Lookup.Families[0].Name
	const deletedAt = 1 << 50
	mutate(t, ctx, st, target.Lookup.Name, target.Row,
		store.Mutation{Kind: store.DeleteColumn, Family: fam, Qualifier: layout.SourceQualifier(target.From[0]), Timestamp: deletedAt},
		store.Mutation{Kind: store.Put, Family: fam, Qualifier: layout.QualRefState, Timestamp: deletedAt, Value: []byte{layout.RefDeleted}})
	var stale int64
	for _, e := range ents {
		if _, ok := e.state.Live.Get(layout.LiveQualifier(target.Ref, target.Key, target.From[0])); ok {
			stale++
		}
	}
	want := map[string]Counts{KindLive: {Stale: stale}}
	checkCounts(t, "dry run", run(t, ctx, sp, st, Options{DryRun: true}), want)
	checkCounts(t, "plan/run/merge", runParts(t, ctx, sp, st, 3, Options{DryRun: true}), want)
	fix := run(t, ctx, sp, st, Options{})
	checkCounts(t, "repair", fix, want)
	if fix.Failed() != 0 || fix.Kinds[KindLive].Fixed != stale {
		t.Fatalf("repair of %d copies:\n%s", stale, text(fix))
	}
	checkCounts(t, "dry run after", run(t, ctx, sp, st, Options{DryRun: true}), nil)
}
