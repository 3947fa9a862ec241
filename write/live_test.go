package write

import (
	"context"
	"fmt"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// liveName reads an order's live copy of a product name, "" when absent.
func liveName(t *testing.T, st store.Store, w *Writer, state map[string]any, sku string) string {
	t.Helper()
	plan := w.plan
	ent := plan.Entity("order")
	d, err := layout.Derive(plan, ent, state)
	if err != nil {
		t.Fatal(err)
	}
	row, err := st.Get(context.Background(), "orders", store.Get{Row: d.PrimaryKey})
	if err != nil {
		t.Fatal(err)
	}
	ref := ent.References[0]
	lr, err := layout.NewLiveRef(plan, ref, layout.LookupFor(plan, ent, ref), sku)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := row.Latest("d", layout.LiveQualifier(ref, lr.Key, "name"))
	if !ok {
		return ""
	}
	return string(c.Value)
}

// ordersWriter opens a store with the example's tables and a writer on it;
// the store closes when the test ends.
func ordersWriter(t *testing.T) (*pebble.Store, *Writer) {
	t.Helper()
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	plan := ordersPlan(t)
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	return st, New(plan, st, Options{})
}

func TestLiveCopies(t *testing.T) {
	ctx := context.Background()
	st, w := ordersWriter(t)
	product := func(v int64, name string) *event.Event {
		if name == "" {
			return &event.Event{Entity: "product", Key: map[string]any{"sku": "p1"}, Version: v, Op: event.Delete}
		}
		return &event.Event{Entity: "product", Key: map[string]any{"sku": "p1"}, Version: v, Op: event.Upsert,
			State: map[string]any{"sku": "p1", "name": name, "priceCents": int64(100)}}
	}
	order := func(id string, v int64, skus ...string) (*event.Event, map[string]any) {
		var items []map[string]any
		for i, s := range skus {
			items = append(items, map[string]any{"line": int32(i + 1), "sku": s, "quantity": int64(1), "name": "snap " + s})
		}
		st := map[string]any{"orderId": id, "customerId": "c1", "status": "OPEN", "placedAt": int64(1000)}
		if items != nil {
			st["items"] = items
		}
		return &event.Event{Entity: "order", Key: map[string]any{"orderId": id}, Version: v, Op: event.Upsert, State: st}, st
	}
	apply := func(evs ...*event.Event) {
		t.Helper()
		if _, rej, err := w.Apply(ctx, evs); err != nil || len(rej) > 0 {
			t.Fatalf("apply: %v %v", err, rej)
		}
	}
	expect := func(state map[string]any, want, when string) {
		t.Helper()
		if got := liveName(t, st, w, state, "p1"); got != want {
			t.Fatalf("%s: live name %q, want %q", when, got, want)
		}
	}

	apply(product(1, "Anvil"))
	o1, s1 := order("o1", 1, "p1", "p2")
	apply(o1)
	expect(s1, "Anvil", "an order written after the product copies its name")

	apply(product(3, "Crate"))
	expect(s1, "Crate", "a rename reaches the referencing order")
	apply(product(2, "Bucket"))
	expect(s1, "Crate", "a late, older rename changes nothing")

	o1v2, s1v2 := order("o1", 2, "p2", "p1")
	apply(o1v2)
	expect(s1v2, "Crate", "the order's own update keeps the live copy")

	o2, s2 := order("o2", 1, "p1")
	apply(o2, product(4, "Drum")) // in one batch: the refresh sees o2's lookup row
	expect(s2, "Drum", "order and rename in one batch")
	expect(s1v2, "Drum", "the rename reaches every order")

	o1v3, s1v3 := order("o1", 3, "p2")
	apply(o1v3)
	apply(product(5, "Easel"))
	expect(s1v3, "Drum", "an order that dropped the product is not refreshed any more")
	o1v4, s1v4 := order("o1", 4, "p1")
	apply(o1v4)
	expect(s1v4, "Easel", "referencing it again copies the latest name")

	apply(product(6, ""))
	expect(s1v4, "", "a deleted product leaves no live copy (readers use the snapshot)")
	expect(s2, "", "in every order")

	// Replaying the whole product history changes nothing.
	apply(product(1, "Anvil"), product(3, "Crate"), product(2, "Bucket"), product(4, "Drum"), product(5, "Easel"))
	expect(s2, "", "after a replay")
}

// A deleted reference stays deleted whatever arrives after it: an older
// upsert of the product must not copy its name into an order written after
// the delete (no delete marker covers that order's copy). Every order of
// the three events, one event per batch and all in one batch.
func TestLiveCopyDeletedReferenceStaysDeleted(t *testing.T) {
	ctx := context.Background()
	plan := ordersPlan(t)
	del := &event.Event{Entity: "product", Key: map[string]any{"sku": "S"}, Version: 2, Op: event.Delete}
	state := map[string]any{"orderId": "o1", "customerId": "c1", "status": "OPEN", "placedAt": int64(1_791_108_000_000),
		"items": []map[string]any{{"line": int32(1), "sku": "S", "quantity": int64(1), "name": "snapshot name"}}}
	ord := &event.Event{Entity: "order", Key: map[string]any{"orderId": "o1"}, Version: 1, Op: event.Upsert, State: state}
	old := &event.Event{Entity: "product", Key: map[string]any{"sku": "S"}, Version: 1, Op: event.Upsert,
		State: map[string]any{"sku": "S", "name": "old live name", "priceCents": int64(1)}}
	perms := [][]*event.Event{{del, ord, old}, {del, old, ord}, {ord, del, old}, {ord, old, del}, {old, del, ord}, {old, ord, del}}
	for i, perm := range perms {
		for _, batch := range []int{1, 3} {
			st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ddl.Create(ctx, st, plan); err != nil {
				t.Fatal(err)
			}
			w := New(plan, st, Options{})
			for off := 0; off < len(perm); off += batch {
				if _, rej, err := w.Apply(ctx, perm[off:min(off+batch, len(perm))]); err != nil || len(rej) > 0 {
					t.Fatalf("apply: %v %v", err, rej)
				}
			}
			if got := liveName(t, st, w, state, "S"); got != "" {
				t.Errorf("order %d, batches of %d: live name %q after the product's delete, want none (readers show the snapshot)", i, batch, got)
			}
			st.Close()
		}
	}
}

// A rename writes each referencing row once, whatever the number of its
// lines that hold the product, and one cell list serves every row.
func TestRefreshWritesEachHolderOnce(t *testing.T) {
	ctx := context.Background()
	st, w := ordersWriter(t)
	var evs []*event.Event
	var states []map[string]any
	for i, skus := range [][]string{{"p1", "p1", "p2"}, {"p2", "p1"}, {"p2"}} {
		state := map[string]any{"orderId": fmt.Sprintf("o%d", i), "customerId": fmt.Sprintf("c%d", i%2), "status": "OPEN", "placedAt": int64(1000 + i)}
		var items []map[string]any
		for l, s := range skus {
			items = append(items, map[string]any{"line": int32(l + 1), "sku": s, "quantity": int64(1), "name": "snap"})
		}
		state["items"] = items
		evs = append(evs, &event.Event{Entity: "order", Key: map[string]any{"orderId": state["orderId"]}, Version: 1, Op: event.Upsert, State: state})
		states = append(states, state)
	}
	if _, rej, err := w.Apply(ctx, evs); err != nil || len(rej) > 0 {
		t.Fatalf("apply: %v %v", err, rej)
	}
	rename := &event.Event{Entity: "product", Key: map[string]any{"sku": "p1"}, Version: 2, Op: event.Upsert,
		State: map[string]any{"sku": "p1", "name": "Anvil", "priceCents": int64(100)}}
	stats, rej, err := w.Apply(ctx, []*event.Event{rename})
	if err != nil || len(rej) > 0 {
		t.Fatalf("apply rename: %v %v", err, rej)
	}
	if stats.Fanout != 2 {
		t.Fatalf("fan-out %d cells, want 2 (orders o0 and o1, one name each)", stats.Fanout)
	}
	for i, want := range []string{"Anvil", "Anvil", ""} {
		if got := liveName(t, st, w, states[i], "p1"); got != want {
			t.Fatalf("order o%d: live name %q, want %q", i, got, want)
		}
	}
}

// A product event that leaves the copied name as it is (a price change)
// rewrites no order, once the fan-out of the name's version ran to its end;
// one whose fan-out a crash cut short, or a rename, still reaches every
// order. The copies keep the timestamp of the reference row's value, which
// is what reconcile compares them by.
func TestRefreshSkipsUnchangedCopies(t *testing.T) {
	ctx := context.Background()
	st, w := ordersWriter(t)
	var orders []*event.Event
	var states []map[string]any
	for i := range 3 {
		state := map[string]any{"orderId": fmt.Sprintf("o%d", i), "customerId": "c1", "status": "OPEN", "placedAt": int64(1000 + i),
			"items": []map[string]any{{"line": int32(1), "sku": "p1", "quantity": int64(1), "name": "snap"}}}
		orders = append(orders, &event.Event{Entity: "order", Key: map[string]any{"orderId": state["orderId"]}, Version: 1, Op: event.Upsert, State: state})
		states = append(states, state)
	}
	if _, rej, err := w.Apply(ctx, orders); err != nil || len(rej) > 0 {
		t.Fatalf("apply orders: %v %v", err, rej)
	}
	product := func(v int64, name string, price int64) *event.Event {
		return &event.Event{Entity: "product", Key: map[string]any{"sku": "p1"}, Version: v, Op: event.Upsert,
			State: map[string]any{"sku": "p1", "name": name, "priceCents": price}}
	}
	ent := w.plan.Entity("order")
	ref := ent.References[0]
	lookup := layout.LookupFor(w.plan, ent, ref)
	lr, err := layout.NewLiveRef(w.plan, ref, lookup, "p1")
	if err != nil {
		t.Fatal(err)
	}
	// step applies one event and checks the fan-out it wrote, and that
	// every order shows name, copied at version at.
	step := func(ev *event.Event, fanout, unchanged int, name string, at int64, when string) {
		t.Helper()
		stats, rej, err := w.Apply(ctx, []*event.Event{ev})
		if err != nil || len(rej) > 0 {
			t.Fatalf("%s: apply: %v %v", when, err, rej)
		}
		if stats.Fanout != fanout || stats.Unchanged != unchanged {
			t.Fatalf("%s: fan-out %d cells and %d unchanged refreshes, want %d and %d", when, stats.Fanout, stats.Unchanged, fanout, unchanged)
		}
		for i, state := range states {
			d, err := layout.Derive(w.plan, ent, state)
			if err != nil {
				t.Fatal(err)
			}
			row, err := st.Get(ctx, "orders", store.Get{Row: d.PrimaryKey})
			if err != nil {
				t.Fatal(err)
			}
			c, ok := row.Latest("d", layout.LiveQualifier(ref, lr.Key, "name"))
			if !ok || string(c.Value) != name || c.Timestamp != at {
				t.Fatalf("%s: order o%d holds %q at %d (present %v), want %q at %d", when, i, c.Value, c.Timestamp, ok, name, at)
			}
		}
	}
	step(product(2, "Anvil", 100), 3, 0, "Anvil", 2, "first version")
	step(product(3, "Anvil", 200), 0, 1, "Anvil", 2, "a price change")
	step(product(3, "Anvil", 200), 0, 1, "Anvil", 2, "its replay")
	step(product(2, "Anvil", 100), 0, 0, "Anvil", 2, "an older event, stale")
	step(product(4, "Bucket", 200), 3, 0, "Bucket", 4, "a rename")

	// A rename whose fan-out a crash cut short: the reference row holds
	// version 5's name, and no order does.
	fam := lookup.Families[0].Name
	cut := store.RowMutation{Row: lr.Row, Mutations: []store.Mutation{
		{Kind: store.Put, Family: fam, Qualifier: layout.QualRefState, Timestamp: 5, Value: []byte{layout.RefUpserted}},
		{Kind: store.Put, Family: fam, Qualifier: layout.SourceQualifier("name"), Timestamp: 5, Value: []byte("Crate")},
	}}
	if err := st.Mutate(ctx, lookup.Name, cut); err != nil {
		t.Fatal(err)
	}
	// The next event, folded with the replay of version 5 into one batch,
	// copies the same name: it must still reach every order.
	step(product(6, "Crate", 300), 3, 0, "Crate", 6, "the same name after a cut fan-out")
	step(product(7, "Crate", 400), 0, 1, "Crate", 6, "a price change after it")
}
