package pebble

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

func openTest(t *testing.T, opts Options) *Store {
	t.Helper()
	st, err := Open(context.Background(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		dir  string
		opts Options
		bad  bool
	}{
		{url: "pebble:///var/lib/denorm", dir: "/var/lib/denorm"},
		{url: "pebble://./denorm-data", dir: "denorm-data"},
		{url: "pebble://./a/b/?max_cell_size=100&max_row_size=2000&durability=async_wal", dir: "a/b",
			opts: Options{MaxCellSize: 100, MaxRowSize: 2000, Durability: store.AsyncWAL}},
		{url: "pebble:///d?durability=skip_wal", dir: "/d", opts: Options{Durability: store.SkipWAL}},
		{url: "pebble://host/d", bad: true},
		{url: "pebble://", bad: true},
		{url: "pebble:///d?durability=fast", bad: true},
		{url: "pebble:///d?max_cell_size=-1", bad: true},
		{url: "pebble:///d?cache=1", bad: true},
		{url: "pebble:///d?cache_size=8388608", dir: "/d", opts: Options{CacheSize: 8 << 20}},
		{url: "pebble:///d?cache_size=0", bad: true},
		{url: "pebble:///d?cache_size=8MiB", bad: true},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		dir, opts, err := parseURL(u)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: parsed as %q %+v, want an error", tc.url, dir, opts)
			}
			continue
		}
		if err != nil || dir != tc.dir || opts.MaxCellSize != tc.opts.MaxCellSize || opts.MaxRowSize != tc.opts.MaxRowSize || opts.Durability != tc.opts.Durability || opts.CacheSize != tc.opts.CacheSize {
			t.Errorf("%s: got %q %+v %v, want %q %+v", tc.url, dir, opts, err, tc.dir, tc.opts)
		}
	}
}

func TestOpenThroughRegistry(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "pebble://"+t.TempDir()+"?durability=async_wal")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ListTables(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("ListTables after Close: %v, want ErrClosed", err)
	}
	if err := st.Mutate(ctx, "t", store.RowMutation{Row: []byte("r")}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Mutate after Close: %v, want ErrClosed", err)
	}
}

// TestReopenKeepsTables checks metadata and cells survive a close, and that a
// dropped table's id is not reused by the next table.
func TestReopenKeepsTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}}, SplitKeys: [][]byte{[]byte("m")}}
	for _, name := range []string{"old", "t"} {
		spec.Name = name
		if err := st.CreateTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
		put := store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 7, Value: []byte(name)}}}
		if err := st.Mutate(ctx, name, put); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DropTable(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec.Name = "new"
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	names, _ := st.ListTables(ctx)
	if fmt.Sprint(names) != "[new t]" {
		t.Fatalf("tables after reopen: %v", names)
	}
	got, _ := st.DescribeTable(ctx, "t")
	if got.Families[0].MaxVersions != 3 || len(got.SplitKeys) != 1 {
		t.Fatalf("spec after reopen: %+v", got)
	}
	for name, want := range map[string]string{"t": "t", "new": ""} {
		row, err := st.Get(ctx, name, store.Get{Row: []byte("r")})
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := row.Latest("f", []byte("q")); string(c.Value) != want || ok != (want != "") {
			t.Fatalf("table %s row r: %q %v, want %q", name, c.Value, ok, want)
		}
	}
}

// TestTTLWithClock moves the store's clock past a family TTL: reads hide the
// cell at once, and a major compaction removes it for good.
func TestTTLWithClock(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(1_000_000)
	st := openTest(t, Options{Clock: now.Load})
	spec := store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f", TTL: 10 * time.Second}}}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	put := store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: store.LatestTimestamp, Value: []byte("v")}}}
	if err := st.Mutate(ctx, "t", put); err != nil {
		t.Fatal(err)
	}
	row, _ := st.Get(ctx, "t", store.Get{Row: []byte("r")})
	if len(row.Cells) != 1 || row.Cells[0].Timestamp != 1_000_000 {
		t.Fatalf("before expiry: %+v", row)
	}
	now.Store(1_000_000 + 10_000) // exactly at the edge: still live
	if row, _ = st.Get(ctx, "t", store.Get{Row: []byte("r")}); len(row.Cells) != 1 {
		t.Fatalf("at the TTL edge: %+v", row)
	}
	now.Add(1)
	if row, _ = st.Get(ctx, "t", store.Get{Row: []byte("r")}); !row.Empty() {
		t.Fatalf("after expiry: %+v", row)
	}
	if err := st.MajorCompact(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	now.Store(0) // even with the clock turned back, the cell is gone
	if row, _ = st.Get(ctx, "t", store.Get{Row: []byte("r")}); !row.Empty() {
		t.Fatalf("after compaction: %+v", row)
	}
}

// TestConcurrentIncrementAndCheckAndMutate runs read-modify-writes on a few
// rows from many goroutines; run it with -race.
func TestConcurrentIncrementAndCheckAndMutate(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, Options{Durability: store.AsyncWAL})
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	var claimed atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				row := []byte{'r', byte('0' + i%3)}
				if _, err := st.Increment(ctx, "t", store.Increment{Row: row, Columns: []store.IncrementColumn{{Family: "f", Qualifier: []byte("n"), Delta: 1}}}); err != nil {
					t.Error(err)
					return
				}
				// Exactly one worker may claim each slot.
				slot := []byte(fmt.Sprintf("slot%d", i))
				ok, err := st.CheckAndMutate(ctx, "t", store.Condition{Family: "f", Qualifier: slot, Absent: true},
					store.RowMutation{Row: row, Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: slot, Timestamp: store.LatestTimestamp, Value: []byte("x")}}})
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					claimed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	var total int64
	for r := 0; r < 3; r++ {
		row, err := st.Get(ctx, "t", store.Get{Row: []byte{'r', byte('0' + r)}, Columns: []store.Column{{Family: "f", Qualifier: []byte("n")}}})
		if err != nil {
			t.Fatal(err)
		}
		total += int64(binary.BigEndian.Uint64(row.Cells[0].Value))
	}
	if total != workers*rounds {
		t.Fatalf("counters sum to %d, want %d", total, workers*rounds)
	}
	if claimed.Load() != rounds {
		t.Fatalf("%d slots claimed, want %d", claimed.Load(), rounds)
	}
}

// TestScanSeesWholeMutations scans while a writer rewrites rows whose cells
// must always agree; a torn row would show two different values.
func TestScanSeesWholeMutations(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, Options{Durability: store.AsyncWAL})
	spec := store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	write := func(gen int) error {
		var ms []store.RowMutation
		for r := 0; r < 20; r++ {
			v := []byte(fmt.Sprint(gen))
			ms = append(ms, store.RowMutation{Row: []byte(fmt.Sprintf("row%02d", r)), Mutations: []store.Mutation{
				{Kind: store.Put, Family: "a", Qualifier: []byte("x"), Timestamp: int64(gen), Value: v},
				{Kind: store.Put, Family: "b", Qualifier: []byte("y"), Timestamp: int64(gen), Value: v},
			}})
		}
		_, err := st.Batch(ctx, "t", ms)
		return err
	}
	if err := write(1); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for gen := 2; gen < 200; gen++ {
			if err := write(gen); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		sc, err := st.Scan(ctx, "t", store.Scan{})
		if err != nil {
			t.Fatal(err)
		}
		for sc.Next(ctx) {
			c := sc.Row().Cells
			if len(c) != 2 || string(c[0].Value) != string(c[1].Value) {
				t.Fatalf("torn row %s: %+v", sc.Row().Key, c)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		sc.Close()
	}
}

func TestRowTooBigAndCellTooBig(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, Options{MaxCellSize: 200, MaxRowSize: 1000})
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f", MaxVersions: 100}}}); err != nil {
		t.Fatal(err)
	}
	big := store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: make([]byte, 200)}}}
	var cte *store.CellTooBigError
	if err := st.Mutate(ctx, "t", big); !errors.As(err, &cte) || cte.Table != "t" || string(cte.Row) != "r" || cte.Size != 20+1+1+1+200 {
		t.Fatalf("oversize cell: %v", err)
	}
	for ts := 1; ts <= 20; ts++ {
		m := store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: int64(ts), Value: make([]byte, 100)}}}
		if err := st.Mutate(ctx, "t", m); err != nil {
			t.Fatal(err)
		}
	}
	var rtb *store.RowTooBigError
	if _, err := st.Get(ctx, "t", store.Get{Row: []byte("r")}); !errors.As(err, &rtb) || string(rtb.Row) != "r" {
		t.Fatalf("Get of a big row: %v", err)
	}
	sc, _ := st.Scan(ctx, "t", store.Scan{})
	defer sc.Close()
	if sc.Next(ctx) || !errors.Is(sc.Err(), store.ErrRowTooBig) {
		t.Fatalf("Scan of a big row: %v", sc.Err())
	}
}

// TestCloseWithOpenScanner closes the store while a scanner is open and
// another goroutine is using it: the scanner ends with ErrClosed.
func TestCloseWithOpenScanner(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	var ms []store.RowMutation
	for i := 0; i < 2000; i++ {
		ms = append(ms, store.RowMutation{Row: []byte(fmt.Sprintf("r%05d", i)), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}})
	}
	if _, err := st.Batch(ctx, "t", ms); err != nil {
		t.Fatal(err)
	}
	sc, err := st.Scan(ctx, "t", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() {
		n := 0
		for sc.Next(ctx) {
			n++
		}
		done <- n
	}()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	n := <-done
	if n < 2000 && !errors.Is(sc.Err(), store.ErrClosed) {
		t.Fatalf("scan stopped after %d rows with %v, want ErrClosed", n, sc.Err())
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestScanStopsAtTableEnd scans tables whose keys lie next to each other in
// Pebble (consecutive ids, the same rows), with and without Stop, forwards
// and backwards: a forward scan without Stop ends where the next table
// begins by its own test of the table prefix.
func TestScanStopsAtTableEnd(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names := []string{"a", "b", "c"}
	for _, name := range names {
		if err := st.CreateTable(ctx, store.TableSpec{Name: name, Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
			t.Fatal(err)
		}
		var ms []store.RowMutation
		for i := 0; i < 50; i++ {
			ms = append(ms, store.RowMutation{Row: []byte(fmt.Sprintf("r%03d", i)), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte(name)}}})
		}
		if _, err := st.Batch(ctx, name, ms); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		for _, sc := range []store.Scan{{}, {Start: []byte("r010")}, {Stop: []byte("r040")}, {Reverse: true}} {
			s, err := st.Scan(ctx, name, sc)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for s.Next(ctx) {
				for _, c := range s.Row().Cells {
					if string(c.Value) != name {
						t.Fatalf("scan %q %+v: cell of table %q", name, sc, c.Value)
					}
				}
				n++
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			want := 50
			if len(sc.Start) > 0 {
				want = 40
			} else if len(sc.Stop) > 0 {
				want = 40
			}
			if n != want {
				t.Fatalf("scan %q %+v: %d rows, want %d", name, sc, n, want)
			}
		}
	}
}
