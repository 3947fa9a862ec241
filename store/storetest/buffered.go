package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var bufferedTests = []testCase{
	{"BufferedFlushBySize", testBufferedBySize},
	{"BufferedFlushByInterval", testBufferedByInterval},
	{"BufferedFlushByClose", testBufferedByClose},
	{"BufferedListenerSeesFailures", testBufferedListener},
	{"BufferedFailuresWithoutListener", testBufferedNoListener},
}

func rowPut(row, family string, value string) store.RowMutation {
	return store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
		{Kind: store.Put, Family: family, Qualifier: []byte("q"), Timestamp: 1, Value: []byte(value)},
	}}
}

// visible reports which of the rows a Get finds.
func (e *env) visible(table string, rows []string) []string {
	e.t.Helper()
	var out []string
	for _, r := range rows {
		if !e.get(table, store.Get{Row: []byte(r)}).Empty() {
			out = append(out, r)
		}
	}
	return out
}

func testBufferedBySize(t *testing.T, e *env) {
	name := e.simple(1, "f")
	value := string(make([]byte, 100))
	size := rowPut("r000", "f", value).Size()
	bm := store.NewBufferedMutator(e.st, name, store.BufferedOptions{WriteBufferSize: 10 * size})
	defer bm.Close(e.ctx)
	var rows []string
	for i := range 25 {
		r := fmt.Sprintf("r%03d", i)
		rows = append(rows, r)
		if err := bm.Mutate(e.ctx, rowPut(r, "f", value)); err != nil {
			t.Fatalf("Mutate %s: %v", r, err)
		}
	}
	// Two full buffers went out while mutating; the last five wait.
	if got, want := e.visible(name, rows), rows[:20]; !slices.Equal(got, want) {
		t.Errorf("before Flush, visible rows %v, want %v", got, want)
	}
	if err := bm.Flush(e.ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got := e.visible(name, rows); !slices.Equal(got, rows) {
		t.Errorf("after Flush, visible rows %v, want all %d", got, len(rows))
	}
}

func testBufferedByInterval(t *testing.T, e *env) {
	name := e.simple(1, "f")
	bm := store.NewBufferedMutator(e.st, name, store.BufferedOptions{FlushInterval: 20 * time.Millisecond})
	defer bm.Close(e.ctx)
	if err := bm.Mutate(e.ctx, rowPut("r", "f", "v")); err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.get(name, store.Get{Row: []byte("r")}).Empty() {
		if time.Now().After(deadline) {
			t.Fatalf("a buffered mutation was not flushed by the 20ms interval within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testBufferedByClose(t *testing.T, e *env) {
	name := e.simple(1, "f")
	bm := store.NewBufferedMutator(e.st, name, store.BufferedOptions{})
	rows := []string{"a", "b", "c"}
	for _, r := range rows {
		if err := bm.Mutate(e.ctx, rowPut(r, "f", r)); err != nil {
			t.Fatalf("Mutate: %v", err)
		}
	}
	if got := e.visible(name, rows); len(got) != 0 {
		t.Errorf("rows %v visible before anything was flushed", got)
	}
	if err := bm.Close(e.ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := e.visible(name, rows); !slices.Equal(got, rows) {
		t.Errorf("after Close, visible rows %v, want %v", got, rows)
	}
	if err := bm.Mutate(e.ctx, rowPut("d", "f", "d")); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Mutate after Close: err = %v, want ErrClosed", err)
	}
	if err := bm.Close(e.ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func testBufferedListener(t *testing.T, e *env) {
	name := e.simple(1, "f")
	var (
		mu     sync.Mutex
		failed = map[string]error{}
	)
	bm := store.NewBufferedMutator(e.st, name, store.BufferedOptions{
		WriteBufferSize: 200,
		Listener: func(m store.RowMutation, err error) {
			mu.Lock()
			defer mu.Unlock()
			failed[string(m.Row)] = err
		},
	})
	var good, bad []string
	for i := range 30 {
		r := fmt.Sprintf("r%02d", i)
		family := "f"
		if i%7 == 3 {
			family = "nope"
			bad = append(bad, r)
		} else {
			good = append(good, r)
		}
		if err := bm.Mutate(e.ctx, rowPut(r, family, "v")); err != nil {
			t.Fatalf("Mutate %s: %v", r, err)
		}
	}
	if err := bm.Close(e.ctx); err != nil {
		t.Errorf("Close with a listener: %v; failures belong to the listener", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var gotBad []string
	for r, err := range failed {
		gotBad = append(gotBad, r)
		if !errors.Is(err, store.ErrFamilyNotFound) {
			t.Errorf("listener got %v for row %s, want ErrFamilyNotFound", err, r)
		}
	}
	slices.Sort(gotBad)
	if !slices.Equal(gotBad, bad) {
		t.Errorf("listener saw failures of %v, want %v", gotBad, bad)
	}
	if got := e.visible(name, append(slices.Clone(good), bad...)); !slices.Equal(got, good) {
		t.Errorf("visible rows %v, want the good ones %v", got, good)
	}
}

func testBufferedNoListener(t *testing.T, e *env) {
	name := e.simple(1, "f")
	bm := store.NewBufferedMutator(e.st, name, store.BufferedOptions{})
	defer bm.Close(e.ctx)
	for _, m := range []store.RowMutation{rowPut("a", "f", "a"), rowPut("b", "nope", "b"), rowPut("c", "nope", "c"), rowPut("d", "f", "d")} {
		if err := bm.Mutate(e.ctx, m); err != nil {
			t.Fatalf("Mutate: %v", err)
		}
	}
	err := bm.Flush(e.ctx)
	var be *store.BatchError
	if !errors.As(err, &be) || len(be.Errs) != 2 || !errors.Is(err, store.ErrFamilyNotFound) {
		t.Errorf("Flush: err = %v, want a BatchError of 2 ErrFamilyNotFound", err)
	}
	if got := e.visible(name, []string{"a", "b", "c", "d"}); !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("visible rows %v, want [a d]", got)
	}
	if err := bm.Flush(e.ctx); err != nil {
		t.Errorf("second Flush reported old failures again: %v", err)
	}
}
