package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var atomicTests = []testCase{
	{"RowMutationAtomicToReaders", testRowMutationAtomic},
}

// atomicRounds is how many row mutations the writer applies while readers
// look; enough for a torn write to show up under -race on two cores.
const atomicRounds = 200

// atomicMaxTime caps the atomicity test on slow backends.
const atomicMaxTime = 2 * time.Second

// testRowMutationAtomic has one writer apply, round after round, a row
// mutation that puts the round number in two families, adds a marker column
// for the round and deletes the previous round's marker. Readers, by Get and
// by Scan, must always see one whole round.
func testRowMutationAtomic(t *testing.T, e *env) {
	name := e.simple(1, "a", "b")
	row := []byte("atom")
	stop := []byte("atom\x00")
	round := func(i int) store.RowMutation {
		ts := int64(i)
		return store.RowMutation{Row: row, Mutations: []store.Mutation{
			{Kind: store.Put, Family: "a", Qualifier: []byte("v"), Timestamp: ts, Value: []byte(strconv.Itoa(i))},
			{Kind: store.Put, Family: "a", Qualifier: []byte("m" + strconv.Itoa(i)), Timestamp: ts, Value: []byte("x")},
			{Kind: store.DeleteColumn, Family: "a", Qualifier: []byte("m" + strconv.Itoa(i-1)), Timestamp: ts},
			{Kind: store.Put, Family: "b", Qualifier: []byte("v"), Timestamp: ts, Value: []byte(strconv.Itoa(i))},
		}}
	}
	e.mutate(name, round(1))

	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		torn    []string
		reads   int
		lastSaw = map[int]int{}
	)
	check := func(reader int, r store.Row) {
		whole, why := wholeRound(r)
		mu.Lock()
		defer mu.Unlock()
		reads++
		if why != "" {
			if len(torn) < 5 {
				torn = append(torn, why+": "+cellsString(r.Cells))
			}
			return
		}
		// Rounds only go forward for each reader.
		if whole < lastSaw[reader] {
			torn = append(torn, fmt.Sprintf("reader %d saw round %d after round %d", reader, whole, lastSaw[reader]))
		}
		lastSaw[reader] = whole
	}
	var written atomic.Int64
	readsSoFar := func() int {
		mu.Lock()
		defer mu.Unlock()
		return reads
	}
	for reader := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var r store.Row
				if reader == 2 {
					rows, err := scanAll(ctx, e.st, name, store.Scan{Start: row, Stop: stop})
					if err != nil || len(rows) != 1 {
						if ctx.Err() == nil {
							mu.Lock()
							torn = append(torn, fmt.Sprintf("scan: %d rows, err %v", len(rows), err))
							mu.Unlock()
						}
						return
					}
					r = rows[0]
				} else {
					var err error
					r, err = e.st.Get(ctx, name, store.Get{Row: row})
					if err != nil {
						if ctx.Err() == nil {
							mu.Lock()
							torn = append(torn, "get: "+err.Error())
							mu.Unlock()
						}
						return
					}
				}
				check(reader, r)
				// Readers far ahead of the writer leave it the CPU: what
				// matters is a read between every pair of writes, not more.
				if int(written.Load())*20 < readsSoFar() {
					time.Sleep(100 * time.Microsecond)
				}
			}
		}()
	}
	// Write until the readers have had plenty of chances to look in between
	// (a writer that is faster than its readers would otherwise hide a torn
	// write), within a time cap for slow backends.
	var werr error
	last := 1
	deadline := time.Now().Add(atomicMaxTime)
	for i := 2; ; i++ {
		if werr = e.st.Mutate(e.ctx, name, round(i)); werr != nil {
			break
		}
		last = i
		written.Store(int64(i))
		mu.Lock()
		enough := i >= atomicRounds && reads >= 3*atomicRounds
		mu.Unlock()
		if enough || time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	cancel()
	wg.Wait()
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	for _, s := range torn {
		t.Errorf("a reader saw part of a row mutation: %s", s)
	}
	final := e.get(name, store.Get{Row: row})
	if n, why := wholeRound(final); why != "" || n != last {
		t.Errorf("final row: round %d (%s), want %d: %s", n, why, last, cellsString(final.Cells))
	}
	t.Logf("%d reads during %d row mutations", reads, last-1)
}

// wholeRound returns the round a row shows, or why it is not one whole round.
func wholeRound(r store.Row) (int, string) {
	var av, bv string
	var markers []string
	for _, c := range r.Cells {
		switch {
		case c.Family == "a" && string(c.Qualifier) == "v":
			av = string(c.Value)
		case c.Family == "b" && string(c.Qualifier) == "v":
			bv = string(c.Value)
		case c.Family == "a" && strings.HasPrefix(string(c.Qualifier), "m"):
			markers = append(markers, string(c.Qualifier[1:]))
		default:
			return 0, "unexpected cell " + cellString(c)
		}
	}
	if av == "" || av != bv {
		return 0, fmt.Sprintf("families disagree: a:v=%q b:v=%q", av, bv)
	}
	if len(markers) != 1 || markers[0] != av {
		return 0, fmt.Sprintf("round %s with markers %v", av, markers)
	}
	n, _ := strconv.Atoi(av)
	return n, ""
}

var batchTests = []testCase{
	{"BatchPerRowResults", testBatchPerRow},
	{"BatchLarge", testBatchLarge},
}

func testBatchPerRow(t *testing.T, e *env) {
	name := e.simple(1, "f")
	put := func(row, family string, value []byte) store.RowMutation {
		return store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
			{Kind: store.Put, Family: family, Qualifier: []byte("q"), Timestamp: 1, Value: value},
		}}
	}
	ms := []store.RowMutation{
		put("r0", "f", []byte("ok0")),
		put("r1", "nope", []byte("bad family")),
		put("r2", "f", []byte("ok2")),
	}
	bigOK := e.h.MaxCellSize <= MaxTestableLimit
	if bigOK {
		ms = append(ms, put("r3", "f", make([]byte, e.h.MaxCellSize+1)))
	}
	ms = append(ms, put("r4", "f", []byte("ok4")))
	// A bad row mixed with good mutations of its own: none of it lands.
	ms = append(ms, store.RowMutation{Row: []byte("r5"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("half")},
		{Kind: store.Put, Family: "nope", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("half")},
	}})
	errs, err := e.st.Batch(e.ctx, name, ms)
	if err != nil {
		t.Fatalf("Batch: %v", err)
	}
	if len(errs) != len(ms) {
		t.Fatalf("Batch returned %d errors for %d mutations", len(errs), len(ms))
	}
	for i, m := range ms {
		row := string(m.Row)
		switch row {
		case "r1", "r5":
			if !errors.Is(errs[i], store.ErrFamilyNotFound) {
				t.Errorf("row %s: err = %v, want ErrFamilyNotFound", row, errs[i])
			}
		case "r3":
			if !errors.Is(errs[i], store.ErrCellTooBig) {
				t.Errorf("row %s: err = %v, want ErrCellTooBig", row, errs[i])
			}
		default:
			if errs[i] != nil {
				t.Errorf("row %s: err = %v, want none", row, errs[i])
			}
		}
	}
	for _, row := range []string{"r0", "r2", "r4"} {
		expectCells(t, "good row "+row, e.get(name, store.Get{Row: []byte(row)}).Cells, cells(row, "f:q@1=ok"+row[1:]))
	}
	want := []string{"r0", "r2", "r4"}
	expectKeys(t, "rows after the batch", e.scan(name, store.Scan{}), want...)
	if !bigOK {
		t.Logf("oversized cell not tried: MaxCellSize %d is over %d", e.h.MaxCellSize, MaxTestableLimit)
	}
	// An empty batch is fine.
	errs, err = e.st.Batch(e.ctx, name, nil)
	if err != nil || len(errs) != 0 {
		t.Errorf("empty Batch: %v, %v; want no errors", errs, err)
	}
}

func testBatchLarge(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f"}}, SplitKeys: testSplits})
	const n = 3000
	ms := make([]store.RowMutation, n)
	for i := range ms {
		// Spread over every region, in no particular order.
		ms[i] = rowPut(fmt.Sprintf("%c%05d", 'a'+(i*7)%26, i), "f", strconv.Itoa(i))
	}
	errs, err := e.st.Batch(e.ctx, name, ms)
	if err != nil {
		t.Fatalf("Batch of %d: %v", n, err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Batch row %s: %v", ms[i].Row, err)
		}
	}
	rows := e.scan(name, store.Scan{Caching: 500})
	if len(rows) != n {
		t.Errorf("scan after a batch of %d rows: %d rows", n, len(rows))
	}
}
