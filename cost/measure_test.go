package cost

import (
	"context"
	"math"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

func openPebble(t *testing.T) store.Store {
	t.Helper()
	st, err := pebble.Open(context.Background(), t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// With every size fixed by the schema (no child count guesses, fixed-width
// or declared-size fields, unique keys), the cells Measure writes must add
// up to exactly the estimate.
func TestMeasureMatchesEstimate(t *testing.T) {
	p := parse(t, ordersSrc)
	st := openPebble(t)
	const n = 200
	m, err := Measure(context.Background(), st, p, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) != 3 {
		t.Fatalf("measured %d tables, want 3 (the counter is left out): %+v", len(m.Tables), m.Tables)
	}
	for _, tm := range m.Tables {
		if math.Abs(tm.LogicalPerRecord-tm.EstimatePerRecord) > 1e-9 {
			t.Errorf("%s: measured %.2f bytes per record, estimate %.2f", tm.Table, tm.LogicalPerRecord, tm.EstimatePerRecord)
		}
		if tm.Records != n {
			t.Errorf("%s: %d records", tm.Table, tm.Records)
		}
		if _, ok := st.(DiskUser); !ok && tm.DiskBytes != -1 {
			t.Errorf("%s: store reports no disk usage, but DiskBytes = %d", tm.Table, tm.DiskBytes)
		}
		t.Logf("%s: %d rows, %d cells, %.1f B/record logical, disk %d B (%.1f B/record)", tm.Table, tm.Rows, tm.Cells, tm.LogicalPerRecord, tm.DiskBytes, tm.DiskPerRecord)
	}
	// The rows are really there: the primary table holds n rows.
	sc, err := st.Scan(context.Background(), "orders", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	rows := 0
	for sc.Next(context.Background()) {
		rows++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Errorf("orders holds %d rows, want %d", rows, n)
	}
}

// diskReporting adds a DiskUsage to a real store, reporting a fixed figure,
// to check how Measure uses the optional interface.
type diskReporting struct {
	store.Store
	compacted map[string]bool
}

func (d *diskReporting) MajorCompact(ctx context.Context, table string) error {
	d.compacted[table] = true
	return d.Store.MajorCompact(ctx, table)
}

func (d *diskReporting) DiskUsage(_ context.Context, table string) (int64, error) {
	return 1000, nil
}

func TestMeasureUsesDiskUser(t *testing.T) {
	p := parse(t, ordersSrc)
	st := &diskReporting{Store: openPebble(t), compacted: map[string]bool{}}
	m, err := Measure(context.Background(), st, p, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !m.DiskReported {
		t.Fatal("DiskReported false")
	}
	for _, tm := range m.Tables {
		if tm.DiskBytes != 1000 || tm.DiskPerRecord != 100 || !st.compacted[tm.Table] {
			t.Errorf("%s: %+v (compacted %v)", tm.Table, tm, st.compacted[tm.Table])
		}
	}
}

func TestMeasureExamples(t *testing.T) {
	for _, name := range []string{"orders.yaml", "device_events.yaml"} {
		p, err := schema.Load("../examples/" + name)
		if err != nil {
			t.Logf("skip %s: %v", name, err)
			continue
		}
		m, err := Measure(context.Background(), openPebble(t), p, 300)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tm := range m.Tables {
			if tm.LogicalBytes <= 0 {
				t.Errorf("%s %s: nothing written", name, tm.Table)
			}
			t.Logf("%s %s: %.0f B/record measured, %.0f estimated, disk %d", name, tm.Table, tm.LogicalPerRecord, tm.EstimatePerRecord, tm.DiskBytes)
		}
	}
}

func TestMeasureRefusesExistingTable(t *testing.T) {
	p := parse(t, ordersSrc)
	st := openPebble(t)
	if err := st.CreateTable(context.Background(), p.Tables[0].Spec()); err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(context.Background(), st, p, 1); err == nil {
		t.Fatal("Measure wrote into an existing table")
	}
}
