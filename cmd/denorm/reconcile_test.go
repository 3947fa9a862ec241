package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// Two `denorm reconcile --shard i/2` processes over a primary table split
// in four regions: each scans some rows, together every row exactly once,
// and the missing index rows they repair add up to those injected.
func TestReconcileShards(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	url := "pebble://" + filepath.Join(dir, "data")
	schemaPath := "../../examples/orders.yaml"
	plan, err := schema.Load(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pebble.Open(ctx, filepath.Join(dir, "data"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := plan.Table("orders").Spec()
	spec.SplitKeys = [][]byte{[]byte("c000003"), []byte("c000010"), []byte("c000100")}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: 1500, Seed: 9, Customers: 300}); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(dir, "orders.jsonl")
	if err := os.WriteFile(events, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenFile(events, source.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dl, err := source.OpenDeadLetterFile(events + ".dead")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := write.Run(ctx, write.New(plan, st, write.Options{}), src, dl, write.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dl.Close()
	regions, err := st.Regions(ctx, "orders")
	if err != nil || len(regions) != 4 {
		t.Fatalf("%d regions (%v), want 4", len(regions), err)
	}
	// Lose the per-SKU index row of every 50th order (marker compacted away,
	// as if never written), spread over the regions.
	total, lost := 0, 0
	sc, err := st.Scan(ctx, "orders", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []store.Row
	for sc.Next(ctx) {
		r := sc.Row()
		// A scanner reuses the bytes of the rows it returns: copy them.
		cells := make([]store.Cell, len(r.Cells))
		for i, c := range r.Cells {
			cells[i] = store.Cell{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Timestamp: c.Timestamp, Value: bytes.Clone(c.Value)}
		}
		rows = append(rows, store.Row{Key: bytes.Clone(r.Key), Cells: cells})
	}
	sc.Close()
	ent := plan.Entity("order")
	for i, r := range rows {
		total++
		if i%50 != 0 {
			continue
		}
		s, err := layout.ReadState(plan, ent, plan.Table("orders"), r)
		if err != nil || !s.Exists() {
			continue
		}
		d, err := layout.Derive(plan, ent, s.Values)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "orders_by_status" {
				if err := st.Mutate(ctx, it.Table, store.RowMutation{Row: it.Row, Mutations: []store.Mutation{{Kind: store.DeleteFamily, Family: "d", Timestamp: s.Version}}}); err != nil {
					t.Fatal(err)
				}
				lost++
			}
		}
	}
	if err := st.MajorCompact(ctx, "orders_by_status"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if lost == 0 {
		t.Fatal("nothing injected")
	}

	var sum reconcile.Report
	sum.Kinds = map[string]*reconcile.Counts{}
	for _, shard := range []string{"0/2", "1/2"} {
		cmd := denormCmd("reconcile", "--schema", schemaPath, "--store", url, "--shard", shard, "--table", "orders", "--format", "json")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("shard %s: %v\n%s", shard, err, out)
		}
		var rep reconcile.Report
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("shard %s: %v\n%s", shard, err, out)
		}
		if rep.Rows == 0 {
			t.Fatalf("shard %s scanned no rows", shard)
		}
		sum.Add(&rep)
	}
	if sum.Rows != int64(total) {
		t.Fatalf("the shards scanned %d rows together, the table has %d", sum.Rows, total)
	}
	if got := sum.Kinds[reconcile.KindIndex].Missing; got != int64(lost) {
		t.Fatalf("the shards found %d missing index rows, %d were lost", got, lost)
	}
	out, err := denormCmd("reconcile", "--schema", schemaPath, "--store", url, "--dry-run").Output()
	if err != nil {
		t.Fatalf("a dry run after the shards' repairs: %v\n%s", err, out)
	}
}

// A dry run that finds differences exits 1 and writes the metrics file.
func TestReconcileDryRunExit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	schemaPath := "../../examples/orders.yaml"
	plan, err := schema.Load(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pebble.Open(ctx, filepath.Join(dir, "data"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	// An index row whose order does not exist.
	d, err := layout.Derive(plan, plan.Entity("order"), map[string]any{"orderId": "ghost", "customerId": "c1", "placedAt": int64(1_760_000_000_000), "status": "OPEN"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range d.Items {
		if it.Table == "orders_by_status" {
			var ms []store.Mutation
			for _, c := range it.Cells {
				ms = append(ms, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: 3, Value: c.Value})
			}
			if err := st.Mutate(ctx, it.Table, store.RowMutation{Row: it.Row, Mutations: ms}); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.Close()
	url := "pebble://" + filepath.Join(dir, "data")
	metrics := filepath.Join(dir, "denorm.prom")
	cmd := denormCmd("reconcile", "--schema", schemaPath, "--store", url, "--dry-run", "--metrics-file", metrics)
	out, err := cmd.Output()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("dry run with an orphan: %v, want exit 1\n%s", err, out)
	}
	m, err := os.ReadFile(metrics)
	if err != nil || !bytes.Contains(m, []byte(`denorm_reconcile_copies_orphaned{table="all",kind="index"} 1`)) {
		t.Fatalf("metrics file (%v):\n%s", err, m)
	}
	if err := denormCmd("reconcile", "--schema", schemaPath, "--store", url).Run(); err != nil {
		t.Fatalf("repair: %v", err)
	}
	if err := denormCmd("reconcile", "--schema", schemaPath, "--store", url, "--dry-run").Run(); err != nil {
		t.Fatalf("dry run after the repair: %v", err)
	}
	if code := denormCmd("reconcile", "--schema", schemaPath, "--shard", "2/2").Run(); code == nil {
		t.Fatal("--shard 2/2 was accepted")
	}
}
