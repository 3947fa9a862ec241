package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// TestReconcileWritersStopped: an order counted by the bounded daily_units
// moved a moment ago, and the row it counts in holds a wrong total. A run
// beside the writers leaves that row to a later run (a dry run finds
// nothing); with --writers-stopped a dry run finds the drift and a repair
// mends it.
func TestReconcileWritersStopped(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	schemaPath := ordersSchema
	sp, st := ordersStore(t, ctx, data)
	placed := time.Now().Add(-time.Hour).UnixMilli()
	w := write.New(sp, st, write.Options{})
	for i, customer := range []string{"c2", "c1"} {
		line := fmt.Sprintf(`{"entity":"order","key":{"orderId":"o1"},"version":%d,"state":{"orderId":"o1","customerId":%q,"status":"OPEN","placedAt":%d,"totalCents":5,"items":[{"line":1,"sku":"s1","quantity":3,"name":"n","priceCents":5}]}}`, i+1, customer, placed)
		ev, err := event.Decode(sp, []byte(line))
		if err != nil {
			t.Fatal(err)
		}
		ev.Stream, ev.Offset = "file:events", int64(i)
		if _, rej, err := w.Apply(ctx, []*event.Event{ev}); err != nil || len(rej) > 0 {
			t.Fatalf("apply: %v, %v", err, rej)
		}
	}
	sc, err := st.Scan(ctx, "daily_units", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	var row []byte
	for sc.Next(ctx) {
		row = bytes.Clone(sc.Row().Key)
	}
	sc.Close()
	wrong := &layout.CounterState{}
	wrong.Add("c", []byte("u"), 5)
	if err := st.Mutate(ctx, "daily_units", store.RowMutation{Row: row, Mutations: []store.Mutation{{Kind: store.Put, Family: "c", Qualifier: layout.QualCounterState, Timestamp: 1, Value: layout.EncodeCounterState(wrong)}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	url := "pebble://" + data
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--dry-run"}, 0},
		{[]string{"--dry-run", "--writers-stopped"}, 1},
		{[]string{"--writers-stopped"}, 0},
		{[]string{"--dry-run", "--writers-stopped"}, 0},
	} {
		var out bytes.Buffer
		args := append([]string{"reconcile", "--schema", schemaPath, "--store", url}, c.args...)
		if code := run(ctx, args, &out, &out); code != c.code {
			t.Fatalf("denorm %v: exit %d, want %d:\n%s", args[1:], code, c.code, out.String())
		}
	}
}
