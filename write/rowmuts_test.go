package write

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/store"
)

// sorted returns rows in bytewise order of their keys, one row mutation per
// key holding that key's mutations in the order added: on random keys that
// share long prefixes, are shorter than eight bytes, or are prefixes of one
// another with zero bytes after.
func TestRowMutsSorted(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	for round := 0; round < 200; round++ {
		var rm rowMuts
		type added struct {
			row []byte
			ts  int64
		}
		var all []added
		for i := 0; i < 1+r.Intn(60); i++ {
			row := make([]byte, r.Intn(12))
			for j := range row {
				row[j] = alphabet[r.Intn(len(alphabet))]
			}
			if len(all) > 0 && r.Intn(4) == 0 {
				row = all[r.Intn(len(all))].row // a row added again
			}
			ts := int64(i)
			rm.add("t", row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("q"), Timestamp: ts})
			all = append(all, added{row, ts})
		}
		out := rm.sorted("t")
		n := 0
		for k, m := range out {
			if k > 0 && bytes.Compare(out[k-1].Row, m.Row) >= 0 {
				t.Fatalf("round %d: row %x after %x", round, m.Row, out[k-1].Row)
			}
			var want []int64
			for _, a := range all {
				if bytes.Equal(a.row, m.Row) {
					want = append(want, a.ts)
				}
			}
			if len(want) != len(m.Mutations) {
				t.Fatalf("round %d: row %x has %d mutations, want %d", round, m.Row, len(m.Mutations), len(want))
			}
			for j, x := range m.Mutations {
				if x.Timestamp != want[j] {
					t.Fatalf("round %d: row %x mutations %v out of the order added %v", round, m.Row, m.Mutations, want)
				}
			}
			n += len(m.Mutations)
		}
		if n != len(all) {
			t.Fatalf("round %d: %d mutations out of %d", round, n, len(all))
		}
	}
}

// callText describes a Batch call: its table, then each row and its
// mutations.
func callText(table string, ms []store.RowMutation) string {
	var b strings.Builder
	b.WriteString(table)
	for _, m := range ms {
		fmt.Fprintf(&b, "\n %q", m.Row)
		for _, x := range m.Mutations {
			fmt.Fprintf(&b, " %v/%s/%q@%d=%q", x.Kind, x.Family, x.Qualifier, x.Timestamp, x.Value)
		}
	}
	return b.String()
}

// A writer reuses its mutation lists from one Apply to the next: what it
// sends is what a new writer for every batch sends, call for call, and the
// stores end the same. Batches of many sizes, so that a reused list is
// both shorter and longer than the one before it.
func TestMutationListsReused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := rand.New(rand.NewSource(11))
	// With log positions: a fresh writer on events without them would use
	// a lane of its own, and take every stored write as one it may not
	// have finished (fold), which a reused writer knows it did.
	evs := positioned(historyNS(r, 600, ""), "log")
	sizes := []int{1, 300, 7, 120, 2, 60, 500, 3}
	run := func(fresh bool, evs []*event.Event) ([]string, tableState) {
		f.reset(t, ctx)
		logged := &batchLog[string]{Store: f.ns, describe: callText}
		st := withSyncOf(logged, f.st)
		w := New(f.plan, st, Options{Readers: 1})
		for lo, k := 0, 0; lo < len(evs); k++ {
			hi := min(lo+sizes[k%len(sizes)], len(evs))
			if fresh {
				w = New(f.plan, st, Options{Readers: 1})
			}
			if _, _, err := w.Apply(ctx, evs[lo:hi]); err != nil {
				t.Fatal(err)
			}
			lo = hi
		}
		slices.Sort(logged.calls) // calls to several tables run side by side
		return logged.calls, readAll(t, ctx, f.ns, f.plan)
	}
	wantCalls, want := run(true, evs)
	gotCalls, got := run(false, evs)
	if len(gotCalls) != len(wantCalls) {
		t.Fatalf("%d Batch calls with reused lists, %d with new ones", len(gotCalls), len(wantCalls))
	}
	for i := range gotCalls {
		if gotCalls[i] != wantCalls[i] {
			t.Fatalf("Batch call differs with reused lists:\n%s\nwith new ones:\n%s", gotCalls[i], wantCalls[i])
		}
	}
	if d := got.diff(want); d != "" {
		t.Fatalf("stores differ:\n%s", d)
	}
	// Without positions, a writer per batch rewrites what it cannot know
	// finished: more calls, and the same store.
	moreCalls, again := run(true, unpositioned(evs))
	if len(moreCalls) < len(wantCalls) {
		t.Fatalf("%d Batch calls from a writer per batch without positions, %d with", len(moreCalls), len(wantCalls))
	}
	if d := again.diff(want); d != "" {
		t.Fatalf("a writer per batch without positions ends elsewhere:\n%s", d)
	}
}
