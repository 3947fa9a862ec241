package hbase

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
)

// GetMany cuts a long list into getMultiple calls of at most
// multiGetMaxRows and puts every answer at its request's place.
func TestGetManyChunksInOrder(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{})
	n := 2*multiGetMaxRows + 1
	gets := make([]store.Get, n)
	for i := range gets {
		k := fmt.Sprintf("r%05d", n-i) // descending: order is the caller's
		if i%7 == 3 {
			k = fmt.Sprintf("missing%05d", i)
		}
		gets[i] = store.Get{Row: []byte(k)}
	}
	rows, err := s.GetMany(t.Context(), "t", gets)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	calls := slices.Clone(f.multiGet)
	f.mu.Unlock()
	if want := []int{multiGetMaxRows, multiGetMaxRows, 1}; !slices.Equal(calls, want) {
		t.Errorf("getMultiple calls of %v rows, want %v", calls, want)
	}
	if len(rows) != n {
		t.Fatalf("%d rows for %d gets", len(rows), n)
	}
	for i, r := range rows {
		if string(r.Key) != string(gets[i].Row) {
			t.Fatalf("answer %d is row %q, want %q", i, r.Key, gets[i].Row)
		}
		missing := strings.HasPrefix(string(r.Key), "missing")
		if r.Empty() != missing {
			t.Errorf("row %q: %d cells", r.Key, len(r.Cells))
		}
		if !missing && string(r.Cells[0].Row) != string(r.Key) {
			t.Errorf("row %q: cell of row %q", r.Key, r.Cells[0].Row)
		}
	}
}

// An answer with the wrong number of results, a missing table and an
// unknown family fail the call with wrapped errors.
func TestGetManyErrors(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{})
	gets := []store.Get{{Row: []byte("a")}, {Row: []byte("b")}}
	setShort := func(v bool) { f.mu.Lock(); f.short = v; f.mu.Unlock() }
	setShort(true)
	if _, err := s.GetMany(t.Context(), "t", gets); err == nil || !strings.Contains(err.Error(), "1 results") {
		t.Errorf("a short answer: err = %v, want one naming the count", err)
	}
	setShort(false)
	if _, err := s.GetMany(t.Context(), "nosuch", gets); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("missing table: err = %v, want ErrTableNotFound", err)
	}
	bad := []store.Get{{Row: []byte("a")}, {Row: []byte("b"), Columns: []store.Column{{Family: "nope"}}}}
	if _, err := s.GetMany(t.Context(), "t", bad); !errors.Is(err, store.ErrFamilyNotFound) {
		t.Errorf("unknown family: err = %v, want ErrFamilyNotFound", err)
	}
}
