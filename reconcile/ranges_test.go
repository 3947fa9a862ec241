package reconcile

import (
	"context"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// countRows counts the rows of a table in [start, stop).
func countRows(t *testing.T, ctx context.Context, st store.Store, table string, r keyRange) int64 {
	t.Helper()
	sc, err := st.Scan(ctx, table, store.Scan{Start: r.Start, Stop: r.Stop})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var n int64
	for sc.Next(ctx) {
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// A clean run reads each table once; with one fault in one range, the
// merge re-reads that range and the primary table, and nothing else.
func TestOneFaultReadsOneRange(t *testing.T) {
	ctx := context.Background()
	sp := loadPlan(t, false)
	st := openStore(t, sp)
	apply(t, ctx, write.New(sp, st, write.Options{}), genEvents(t, sp, gen.OrdersOptions{Events: 1500, Seed: 8, SKUs: 40, Renames: 0.05}))
	p, err := NewPlan(ctx, sp, st, PlanOptions{Parts: 3, RangeRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, tbl := range sp.TablesOf("order") {
		rows[tbl.Name] = countRows(t, ctx, st, tbl.Name, keyRange{})
	}
	parts := func() ([]*Partial, map[string]int64) {
		var out []*Partial
		reads := map[string]int64{}
		for i := 0; i < p.Parts; i++ {
			r, err := RunPart(ctx, sp, st, p, i, Options{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range r.Report.RowsRead {
				reads[k] += n
			}
			out = append(out, r)
		}
		return out, reads
	}
	clean, reads := parts()
	for table, n := range rows {
		if reads[table] != n {
			t.Errorf("the parts read %d rows of %s, which has %d: want each table read once", reads[table], table, n)
		}
	}
	rep, err := Merge(ctx, sp, st, p, clean, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Differences() != 0 || rep.Ranges.Unequal != 0 {
		t.Fatalf("clean store:\n%s", text(rep))
	}
	if rep.Ranges.Equal < 20 {
		t.Fatalf("only %d ranges: the test needs many", rep.Ranges.Equal)
	}
	// The merge of a clean run reads nothing more.
	if rep.RowsRead["orders"] != reads["orders"] || rep.RowsRead["orders_by_status"] != reads["orders_by_status"] {
		t.Fatalf("the merge of a clean run read rows: %v, the parts %v", rep.RowsRead, reads)
	}

	// One stale cell in one orders_by_status row.
	ents := primaries(t, ctx, st, sp)
	d, err := layout.DeriveCopies(sp, sp.Entity("order"), ents[len(ents)/2].state.Values)
	if err != nil {
		t.Fatal(err)
	}
	var it layout.Item
	for _, x := range d.Items {
		if x.Table == "orders_by_status" {
			it = x
		}
	}
	mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("junk")})
	var pr PlanRanges
	for _, x := range p.Tables[0].Derived {
		if x.Table == it.Table {
			pr = x
		}
	}
	if len(pr.Splits) < 4 {
		t.Fatalf("%s has %d ranges", it.Table, len(pr.Splits)+1)
	}
	inRange := countRows(t, ctx, st, it.Table, bounds(pr.Splits, rangeOf(pr.Splits, it.Row)))
	if inRange*3 > rows[it.Table] {
		t.Fatalf("the fault's range holds %d of %d rows: too coarse to tell", inRange, rows[it.Table])
	}
	faulty, reads := parts()
	rep, err = Merge(ctx, sp, st, p, faulty, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, "one fault", rep, map[string]Counts{KindIndex: {Stale: 1}})
	if rep.Ranges.Unequal != 1 {
		t.Fatalf("%d unequal ranges, want 1", rep.Ranges.Unequal)
	}
	merged := map[string]int64{}
	for k, n := range rep.RowsRead {
		merged[k] = n - reads[k]
	}
	for table := range rows {
		want := int64(0)
		switch table {
		case it.Table:
			want = inRange
		case "orders":
			want = rows["orders"] // the re-derivation
		}
		if merged[table] != want {
			t.Errorf("the diff read %d rows of %s, want %d", merged[table], table, want)
		}
	}
	// The single-process job cuts its own ranges, of at most 100 stored
	// rows each (cut.go): it reads each table once, then the fault's range
	// of that cut (the rows from the last multiple of 100 at or before the
	// fault's row, up to 100 of them) and the primary table again.
	one := run(t, ctx, sp, st, Options{DryRun: true, Plan: PlanOptions{RangeRows: 100}})
	checkCounts(t, "single process", one, map[string]Counts{KindIndex: {Stale: 1}})
	if one.Ranges.Unequal != 1 {
		t.Fatalf("single process: %d unequal ranges, want 1", one.Ranges.Unequal)
	}
	before := countRows(t, ctx, st, it.Table, keyRange{Stop: it.Row})
	cutRange := min(100, rows[it.Table]-before/100*100)
	if one.RowsRead[it.Table] != rows[it.Table]+cutRange || one.RowsRead["orders"] != 2*rows["orders"] {
		t.Errorf("single process read %v; the table has %d rows, the cut range %d", one.RowsRead, rows[it.Table], cutRange)
	}
}
