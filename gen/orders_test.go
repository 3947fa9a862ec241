package gen

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

func stream(t *testing.T, o OrdersOptions) []string {
	t.Helper()
	var b bytes.Buffer
	if err := Orders(&b, o); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

// The same seed gives the same stream; reordering and duplication move and
// repeat events without changing them; every order's versions count up
// from 1 and its statuses follow the lifecycle.
func TestOrdersStream(t *testing.T) {
	base := OrdersOptions{Events: 3000, Seed: 4, Deletes: 0.02, Renames: 0.02}
	a, b := stream(t, base), stream(t, base)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("same seed, different streams")
	}
	messy := base
	messy.Reorder, messy.Duplicate = 0.2, 0.1
	m := stream(t, messy)
	if len(m) <= len(a) {
		t.Fatalf("duplication added nothing: %d vs %d lines", len(m), len(a))
	}
	set := func(lines []string) []string {
		u := map[string]bool{}
		for _, l := range lines {
			u[l] = true
		}
		out := make([]string, 0, len(u))
		for l := range u {
			out = append(out, l)
		}
		sort.Strings(out)
		return out
	}
	if strings.Join(set(a), "\n") != strings.Join(set(m), "\n") {
		t.Fatal("reordering or duplication changed the events themselves")
	}
	next := map[string]int64{}
	status := map[string]string{}
	allowed := map[string]map[string]bool{"": {"OPEN": true}, "OPEN": {"PAID": true, "CANCELLED": true}, "PAID": {"SHIPPED": true, "CANCELLED": true}}
	for _, l := range a {
		var ev struct {
			Entity, Key, Op string
			Version         int64
			State           struct {
				Status string
				Items  []map[string]any
			}
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		k := ev.Entity + "/" + ev.Key
		if ev.Version != next[k]+1 {
			t.Fatalf("%s: version %d after %d", k, ev.Version, next[k])
		}
		next[k] = ev.Version
		if ev.Entity != "order" || ev.Op == "delete" {
			continue
		}
		if !allowed[status[k]][ev.State.Status] {
			t.Fatalf("%s: status %q after %q", k, ev.State.Status, status[k])
		}
		status[k] = ev.State.Status
		if n := len(ev.State.Items); n < 1 || n > 10 {
			t.Fatalf("%s: %d items", k, n)
		}
	}
}

// Price changes are product versions that keep the name the last rename
// gave; renames change it.
func TestOrdersPriceChanges(t *testing.T) {
	with := OrdersOptions{Events: 4000, Seed: 6, Renames: 0.02, PriceChanges: 0.05}
	type product struct {
		Entity, Key string
		Version     int64
		State       struct{ Name string }
	}
	last := map[string]product{}
	kept, renamed := 0, 0
	for _, l := range stream(t, with) {
		var p product
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		if p.Entity != "product" {
			continue
		}
		if prev, ok := last[p.Key]; ok {
			if p.Version != prev.Version+1 {
				t.Fatalf("%s: version %d after %d", p.Key, p.Version, prev.Version)
			}
			if p.State.Name == prev.State.Name {
				kept++
			} else {
				renamed++
			}
		}
		last[p.Key] = p
	}
	// About 200 price changes and 80 renames over a zipf spread of SKUs.
	if kept < 50 || renamed < 10 {
		t.Fatalf("%d product versions kept the name and %d renamed it: want both", kept, renamed)
	}
}
