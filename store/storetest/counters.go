package storetest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/denorm/denorm/store"
)

var counterTests = []testCase{
	{"IncrementBasics", testIncrementBasics},
	{"IncrementConcurrent", testIncrementConcurrent},
	{"IncrementNonCounterFails", testIncrementNonCounter},
	{"CheckAndMutate", testCheckAndMutate},
	{"CheckAndMutateRace", testCheckAndMutateRace},
	{"CheckAndMutateCounter", testCheckAndMutateCounter},
}

func be64(v int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	return b[:]
}

func (e *env) increment(table, row string, cols ...store.IncrementColumn) []int64 {
	e.t.Helper()
	got, err := e.st.Increment(e.ctx, table, store.Increment{Row: []byte(row), Columns: cols})
	if err != nil {
		e.t.Fatalf("Increment(%s, row %s): %v", table, row, err)
	}
	if len(got) != len(cols) {
		e.t.Fatalf("Increment returned %d values for %d columns", len(got), len(cols))
	}
	return got
}

func inc(family, qualifier string, delta int64) store.IncrementColumn {
	return store.IncrementColumn{Family: family, Qualifier: []byte(qualifier), Delta: delta}
}

// counterValue reads a counter cell and decodes it.
func (e *env) counterValue(table, row, family, qualifier string) (int64, bool) {
	e.t.Helper()
	c, ok := e.get(table, store.Get{Row: []byte(row), Columns: []store.Column{col(family, qualifier)}}).Latest(family, []byte(qualifier))
	if !ok {
		return 0, false
	}
	if len(c.Value) != 8 {
		e.t.Fatalf("counter %s:%s of row %s holds %d bytes, want 8 (big-endian int64)", family, qualifier, row, len(c.Value))
	}
	return int64(binary.BigEndian.Uint64(c.Value)), true
}

func testIncrementBasics(t *testing.T, e *env) {
	name := e.simple(1, "c", "d")
	if got := e.increment(name, "r", inc("c", "n", 5)); got[0] != 5 {
		t.Errorf("first increment by 5 of a missing counter = %d, want 5", got[0])
	}
	if got := e.increment(name, "r", inc("c", "n", -7)); got[0] != -2 {
		t.Errorf("increment by -7 = %d, want -2", got[0])
	}
	if v, ok := e.counterValue(name, "r", "c", "n"); !ok || v != -2 {
		t.Errorf("stored counter = %d (found %v), want -2 as 8 big-endian bytes", v, ok)
	}
	// Several columns, across families, in the order asked.
	got := e.increment(name, "r", inc("d", "z", 1), inc("c", "n", 2), inc("c", "a", -3), inc("d", "y", 0))
	if want := []int64{1, 0, -3, 0}; !slices.Equal(got, want) {
		t.Errorf("multi-column increment = %v, want %v", got, want)
	}
	// A counter written by a put of 8 big-endian bytes is a counter.
	e.put(name, "p", "c", "n", 1, string(be64(1<<40)))
	if got := e.increment(name, "p", inc("c", "n", 1)); got[0] != 1<<40+1 {
		t.Errorf("increment of a put 2^40 = %d, want %d", got[0], int64(1<<40+1))
	}
	// Large deltas keep all 64 bits.
	if got := e.increment(name, "big", inc("c", "n", -1<<62)); got[0] != -1<<62 {
		t.Errorf("increment by -2^62 = %d", got[0])
	}
	if v, _ := e.counterValue(name, "big", "c", "n"); v != -1<<62 {
		t.Errorf("stored -2^62 reads back as %d", v)
	}
}

func testIncrementConcurrent(t *testing.T, e *env) {
	name := e.simple(1, "c")
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Two counters in one increment, one shared row.
				_, err := e.st.Increment(e.ctx, name, store.Increment{Row: []byte("hot"), Columns: []store.IncrementColumn{
					inc("c", "ones", 1), inc("c", "w", int64(w+1)),
				}})
				if err != nil {
					errs <- fmt.Errorf("worker %d increment %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if v, _ := e.counterValue(name, "hot", "c", "ones"); v != workers*each {
		t.Errorf("ones = %d after %d concurrent increments of 1", v, workers*each)
	}
	if v, _ := e.counterValue(name, "hot", "c", "w"); v != each*workers*(workers+1)/2 {
		t.Errorf("w = %d, want %d", v, each*workers*(workers+1)/2)
	}
}

func testIncrementNonCounter(t *testing.T, e *env) {
	name := e.simple(1, "c")
	for _, v := range []string{"abc", "\x00\x00\x00\x01", "123456789"} {
		row := "r" + strconv.Itoa(len(v))
		e.put(name, row, "c", "n", 1, v)
		if _, err := e.st.Increment(e.ctx, name, store.Increment{Row: []byte(row), Columns: []store.IncrementColumn{inc("c", "n", 1)}}); err == nil {
			t.Errorf("increment of a %d-byte value %s succeeded; want an error", len(v), store.Printable([]byte(v)))
		}
		expectCells(t, "the value after a failed increment", e.get(name, store.Get{Row: []byte(row)}).Cells, cells(row, "c:n@1="+v))
	}
}

func testCheckAndMutate(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}, {Name: "g"}}})
	putM := func(q, v string, ts int64) store.RowMutation {
		return store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
			{Kind: store.Put, Family: "f", Qualifier: []byte(q), Timestamp: ts, Value: []byte(v)},
		}}
	}
	cam := func(what string, cond store.Condition, m store.RowMutation, want bool) {
		t.Helper()
		ok, err := e.st.CheckAndMutate(e.ctx, name, cond, m)
		if err != nil {
			t.Fatalf("%s: CheckAndMutate: %v", what, err)
		}
		if ok != want {
			t.Errorf("%s: CheckAndMutate = %v, want %v", what, ok, want)
		}
	}
	absent := store.Condition{Family: "f", Qualifier: []byte("lock"), Absent: true}
	cam("absent on a missing row", absent, putM("lock", "one", 10), true)
	cam("absent when present", absent, putM("lock", "two", 11), false)
	expectCells(t, "after absent checks", e.all(name, "r"), cells("r", "f:lock@10=one"))

	eq := func(v string) store.Condition {
		return store.Condition{Family: "f", Qualifier: []byte("lock"), Value: []byte(v)}
	}
	cam("equals the current value", eq("one"), putM("lock", "three", 20), true)
	cam("equals an older version", eq("one"), putM("lock", "four", 30), false)
	cam("equals another value", eq("nope"), putM("lock", "five", 30), false)
	expectCells(t, "after equals checks", e.all(name, "r"), cells("r", "f:lock@20=three", "f:lock@10=one"))

	// The mutation may touch other columns and families, and delete.
	cam("equals, then a put elsewhere and a delete", eq("three"), store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "g", Qualifier: []byte("x"), Timestamp: 5, Value: []byte("gx")},
		{Kind: store.DeleteColumn, Family: "f", Qualifier: []byte("lock"), Timestamp: 20},
	}}, true)
	expectCells(t, "after the combined mutation", e.all(name, "r"), cells("r", "g:x@5=gx"))
	// Deleted counts as absent.
	cam("absent after delete", absent, putM("lock", "six", 40), true)
	// A condition on another family than the mutation.
	cam("condition on g", store.Condition{Family: "g", Qualifier: []byte("x"), Value: []byte("gx")}, putM("other", "o", 1), true)
	expectCells(t, "at the end", e.all(name, "r"), cells("r", "f:lock@40=six", "f:other@1=o", "g:x@5=gx"))
}

func testCheckAndMutateRace(t *testing.T, e *env) {
	name := e.simple(1, "f")
	const racers, rounds = 12, 5
	for round := range rounds {
		row := []byte("race" + strconv.Itoa(round))
		var wg sync.WaitGroup
		wins := make([]bool, racers)
		errs := make([]error, racers)
		for g := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wins[g], errs[g] = e.st.CheckAndMutate(e.ctx, name,
					store.Condition{Family: "f", Qualifier: []byte("owner"), Absent: true},
					store.RowMutation{Row: row, Mutations: []store.Mutation{
						{Kind: store.Put, Family: "f", Qualifier: []byte("owner"), Timestamp: 1, Value: []byte("g" + strconv.Itoa(g))},
					}})
			}()
		}
		wg.Wait()
		var winners []int
		for g := range racers {
			if errs[g] != nil {
				t.Fatalf("round %d racer %d: %v", round, g, errs[g])
			}
			if wins[g] {
				winners = append(winners, g)
			}
		}
		if len(winners) != 1 {
			t.Errorf("round %d: racers %v won a CheckAndMutate on an absent cell, want exactly one", round, winners)
			continue
		}
		winner := winners[0]
		expectCells(t, fmt.Sprintf("round %d owner", round), e.get(name, store.Get{Row: row}).Cells,
			cells(string(row), "f:owner@1=g"+strconv.Itoa(winner)))
	}
}

// testCheckAndMutateCounter builds a counter out of compare-and-set loops:
// the total is exact only if every successful CheckAndMutate saw the value
// it replaced.
func testCheckAndMutateCounter(t *testing.T, e *env) {
	name := e.simple(1, "f")
	row := []byte("n")
	const workers, each = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				r, err := e.st.Get(e.ctx, name, store.Get{Row: row})
				if err != nil {
					errs <- err
					return
				}
				cond := store.Condition{Family: "f", Qualifier: []byte("v"), Absent: true}
				cur := 0
				if c, ok := r.Latest("f", []byte("v")); ok {
					cond = store.Condition{Family: "f", Qualifier: []byte("v"), Value: c.Value}
					cur, _ = strconv.Atoi(string(c.Value))
				}
				ok, err := e.st.CheckAndMutate(e.ctx, name, cond, store.RowMutation{Row: row, Mutations: []store.Mutation{
					{Kind: store.Put, Family: "f", Qualifier: []byte("v"), Timestamp: int64(cur + 1), Value: []byte(strconv.Itoa(cur + 1))},
				}})
				if err != nil {
					errs <- err
					return
				}
				if ok {
					done++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("CheckAndMutate loop: %v", err)
	}
	want := strconv.Itoa(workers * each)
	expectCells(t, "CAS counter", e.get(name, store.Get{Row: row}).Cells, cells("n", "f:v@"+want+"="+want))
}
