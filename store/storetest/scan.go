package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/denorm/denorm/store"
)

var scanTests = []testCase{
	{"ScanRange", testScanRange},
	{"ScanLimit", testScanLimit},
	{"ScanReverse", testScanReverse},
	{"ScanColumns", testScanColumns},
	{"ScanMaxVersions", testScanMaxVersions},
	{"ScanTimeRange", testScanTimeRange},
	{"ScanBatchWideRow", testScanBatch},
	{"ScannerClose", testScannerClose},
}

func testScanRange(t *testing.T, e *env) {
	name := e.simple(1, "f")
	keys := e.fill(name, 20)
	cases := []struct {
		start, stop string
		want        []string
	}{
		{"", "", keys},
		{"r05", "r10", keys[5:10]},
		{"", "r03", keys[:3]},
		{"r17", "", keys[17:]},
		{"r05\x00", "r07", keys[6:7]}, // start between rows
		{"r04", "r05", keys[4:5]},
		{"r04", "r04\x00", keys[4:5]}, // the smallest range holding one row
		{"s", "", nil},
		{"", "r", nil},
		{"r1", "r2", keys[10:20]},
	}
	for i, c := range cases {
		// Caching is a transport detail: it never changes what a scan returns.
		s := store.Scan{Start: []byte(c.start), Stop: []byte(c.stop), Caching: []int{0, 1, 3}[i%3]}
		rows := e.scan(name, s)
		expectKeys(t, "scan "+describeScan(s), rows, c.want...)
		for _, r := range rows {
			expectCells(t, "row "+string(r.Key), r.Cells, cells(string(r.Key), "f:q@1="+string(r.Key)))
		}
	}
}

func testScanLimit(t *testing.T, e *env) {
	name := e.simple(1, "f")
	keys := e.fill(name, 10)
	expectKeys(t, "limit 3 from r05", e.scan(name, store.Scan{Start: []byte("r05"), Limit: 3}), keys[5:8]...)
	expectKeys(t, "limit 1", e.scan(name, store.Scan{Limit: 1}), keys[0])
	expectKeys(t, "limit past the end", e.scan(name, store.Scan{Start: []byte("r08"), Limit: 5}), keys[8:]...)
	expectKeys(t, "limit inside [r02,r04)", e.scan(name, store.Scan{Start: []byte("r02"), Stop: []byte("r04"), Limit: 5}), keys[2:4]...)
	expectKeys(t, "reverse limit 2", e.scan(name, store.Scan{Reverse: true, Limit: 2}), keys[9], keys[8])
	// A limit over several fetches, and a row whose key is the one just
	// after another's: a remote backend that goes on after a fetch from
	// the row after the last must neither skip it nor repeat the last.
	expectKeys(t, "limit 5 from r03, 2 rows a fetch", e.scan(name, store.Scan{Start: []byte("r03"), Limit: 5, Caching: 2}), keys[3:8]...)
	e.put(name, "r05\x00", "f", "q", 1, "x")
	expectKeys(t, "limit 3 from r05, 1 row a fetch", e.scan(name, store.Scan{Start: []byte("r05"), Limit: 3, Caching: 1}), keys[5], "r05\x00", keys[6])
	expectKeys(t, "from r05, 2 rows a fetch, to r07", e.scan(name, store.Scan{Start: []byte("r05"), Stop: []byte("r07"), Caching: 2}), keys[5], "r05\x00", keys[6])
}

func testScanReverse(t *testing.T, e *env) {
	name := e.simple(1, "f")
	keys := e.fill(name, 20)
	rev := func(ks []string) []string {
		out := slices.Clone(ks)
		slices.Reverse(out)
		return out
	}
	cases := []struct {
		start, stop string // Start is the inclusive upper row, Stop the exclusive lower one
		want        []string
	}{
		{"", "", rev(keys)},
		{"r10", "r05", rev(keys[6:11])},
		{"", "r17", rev(keys[18:])},
		{"r02", "", rev(keys[:3])},
		{"r10\x00", "r08", rev(keys[9:11])}, // upper bound between rows
		{"r100", "", rev(keys[:11])},
		{"r04", "r03", keys[4:5]},
		{"a", "", nil},
	}
	for _, c := range cases {
		s := store.Scan{Start: []byte(c.start), Stop: []byte(c.stop), Reverse: true}
		rows := e.scan(name, s)
		expectKeys(t, "reverse scan "+describeScan(s), rows, c.want...)
		for _, r := range rows {
			expectCells(t, "row "+string(r.Key), r.Cells, cells(string(r.Key), "f:q@1="+string(r.Key)))
		}
	}
	// Cells inside a row keep their forward order in a reverse scan.
	e.mutate(name, store.RowMutation{Row: []byte("r05"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("a"), Timestamp: 1, Value: []byte("a")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("z"), Timestamp: 1, Value: []byte("z")},
	}})
	rows := e.scan(name, store.Scan{Start: []byte("r05"), Stop: []byte("r04"), Reverse: true})
	if len(rows) != 1 {
		t.Fatalf("reverse scan of r05: %d rows, want 1", len(rows))
	}
	expectCells(t, "reverse scan of r05", rows[0].Cells, cells("r05", "f:a@1=a", "f:q@1=r05", "f:z@1=z"))
}

func testScanColumns(t *testing.T, e *env) {
	name := e.simple(1, "a", "b")
	e.mutate(name, store.RowMutation{Row: []byte("r1"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "a", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("1ax")},
		{Kind: store.Put, Family: "a", Qualifier: []byte("y"), Timestamp: 1, Value: []byte("1ay")},
		{Kind: store.Put, Family: "b", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("1bx")},
	}})
	e.put(name, "r2", "b", "y", 1, "2by")
	e.put(name, "r3", "a", "y", 1, "3ay")

	rows := e.scan(name, store.Scan{Columns: []store.Column{fam("a")}})
	// Rows with nothing in the selection are not returned at all.
	expectKeys(t, "scan family a", rows, "r1", "r3")
	if len(rows) == 2 {
		expectCells(t, "r1 family a", rows[0].Cells, cells("r1", "a:x@1=1ax", "a:y@1=1ay"))
		expectCells(t, "r3 family a", rows[1].Cells, cells("r3", "a:y@1=3ay"))
	}
	rows = e.scan(name, store.Scan{Columns: []store.Column{col("b", "x")}})
	expectKeys(t, "scan b:x", rows, "r1")
	if len(rows) == 1 {
		expectCells(t, "r1 b:x", rows[0].Cells, cells("r1", "b:x@1=1bx"))
	}
	rows = e.scan(name, store.Scan{Columns: []store.Column{col("a", "y"), fam("b")}})
	expectKeys(t, "scan a:y and family b", rows, "r1", "r2", "r3")
	if len(rows) == 3 {
		expectCells(t, "r1 a:y,b", rows[0].Cells, cells("r1", "a:y@1=1ay", "b:x@1=1bx"))
		expectCells(t, "r2 a:y,b", rows[1].Cells, cells("r2", "b:y@1=2by"))
	}
	rows = e.scan(name, store.Scan{Columns: []store.Column{fam("a")}, Reverse: true})
	expectKeys(t, "reverse scan family a", rows, "r3", "r1")
}

func testScanMaxVersions(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}}})
	for _, row := range []string{"r1", "r2"} {
		for ts := int64(10); ts <= 40; ts += 10 {
			e.put(name, row, "f", "q", ts, fmt.Sprintf("%s@%d", row, ts))
		}
	}
	check := func(versions int, want ...string) {
		t.Helper()
		rows := e.scan(name, store.Scan{MaxVersions: versions})
		expectKeys(t, fmt.Sprintf("scan versions=%d", versions), rows, "r1", "r2")
		for _, r := range rows {
			var specs []string
			for _, w := range want {
				specs = append(specs, fmt.Sprintf("f:q@%s=%s@%s", w, r.Key, w))
			}
			expectCells(t, fmt.Sprintf("scan versions=%d row %s", versions, r.Key), r.Cells, cells(string(r.Key), specs...))
		}
	}
	check(0, "40")
	check(1, "40")
	check(2, "40", "30")
	// Never more than the family keeps.
	check(10, "40", "30", "20")
}

func testScanTimeRange(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 5}}})
	for ts := int64(10); ts <= 40; ts += 10 {
		e.put(name, "r1", "f", "q", ts, fmt.Sprint(ts))
	}
	e.put(name, "r2", "f", "q", 50, "50")
	rows := e.scan(name, store.Scan{TimeRange: store.TimeRange{Min: 20, Max: 40}, MaxVersions: 5})
	expectKeys(t, "scan time [20,40)", rows, "r1")
	if len(rows) == 1 {
		expectCells(t, "scan time [20,40)", rows[0].Cells, cells("r1", "f:q@30=30", "f:q@20=20"))
	}
	// The newest version inside the range, not the newest overall.
	rows = e.scan(name, store.Scan{TimeRange: store.TimeRange{Min: 0, Max: 30}})
	expectKeys(t, "scan time [0,30)", rows, "r1")
	if len(rows) == 1 {
		expectCells(t, "scan time [0,30)", rows[0].Cells, cells("r1", "f:q@20=20"))
	}
	rows = e.scan(name, store.Scan{TimeRange: store.TimeRange{Min: 40}, MaxVersions: 5})
	expectKeys(t, "scan time [40,inf)", rows, "r1", "r2")
	if len(rows) == 2 {
		expectCells(t, "scan time [40,inf) r1", rows[0].Cells, cells("r1", "f:q@40=40"))
	}
}

func testScanBatch(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "a", MaxVersions: 2}, {Name: "b"}}})
	// A wide row between two narrow ones.
	e.put(name, "r0", "a", "q", 1, "narrow0")
	var ms []store.Mutation
	for i := range 17 {
		q := []byte(fmt.Sprintf("q%02d", i))
		ms = append(ms,
			store.Mutation{Kind: store.Put, Family: "a", Qualifier: q, Timestamp: 1, Value: []byte("old")},
			store.Mutation{Kind: store.Put, Family: "a", Qualifier: q, Timestamp: 2, Value: []byte("new")})
		if i%2 == 0 {
			ms = append(ms, store.Mutation{Kind: store.Put, Family: "b", Qualifier: q, Timestamp: 1, Value: []byte("b")})
		}
	}
	e.mutate(name, store.RowMutation{Row: []byte("r1"), Mutations: ms})
	e.put(name, "r2", "b", "q", 1, "narrow2")

	whole := e.get(name, store.Get{Row: []byte("r1"), MaxVersions: 2})
	if len(whole.Cells) != 17*2+9 {
		t.Fatalf("Get of the wide row: %d cells, want %d", len(whole.Cells), 17*2+9)
	}
	for _, batch := range []int{1, 5, 7, 43, 100} {
		for _, reverse := range []bool{false, true} {
			s := store.Scan{MaxVersions: 2, Batch: batch, Reverse: reverse}
			rows := e.scan(name, s)
			var pieces []store.Row
			var keys []string
			for _, r := range rows {
				if len(r.Cells) == 0 {
					t.Errorf("%s: an empty piece for row %s", describeScan(s), r.Key)
				}
				if len(r.Cells) > batch {
					t.Errorf("%s: a piece of row %s has %d cells, over the batch", describeScan(s), r.Key, len(r.Cells))
				}
				if len(keys) == 0 || keys[len(keys)-1] != string(r.Key) {
					keys = append(keys, string(r.Key))
				}
				if string(r.Key) == "r1" {
					pieces = append(pieces, r)
				}
			}
			wantKeys := []string{"r0", "r1", "r2"}
			if reverse {
				slices.Reverse(wantKeys)
			}
			// Pieces of one row are consecutive: the row keys, with runs
			// collapsed, are each row once.
			if !slices.Equal(keys, wantKeys) {
				t.Errorf("%s: rows arrive as %q, want %q", describeScan(s), keys, wantKeys)
			}
			var joined []store.Cell
			for _, p := range pieces {
				joined = append(joined, p.Cells...)
			}
			expectCells(t, describeScan(s)+": the wide row's pieces joined", joined, whole.Cells)
			if minPieces := (len(whole.Cells) + batch - 1) / batch; len(pieces) < minPieces {
				t.Errorf("%s: %d pieces, want at least %d", describeScan(s), len(pieces), minPieces)
			}
		}
	}
	// Batch and Limit together: the limit counts rows, not pieces.
	rows := e.scan(name, store.Scan{Start: []byte("r1"), Batch: 10, Limit: 1})
	var n int
	for _, r := range rows {
		if !bytes.Equal(r.Key, []byte("r1")) {
			t.Errorf("batch 10 limit 1 from r1: got a piece of row %s", r.Key)
		}
		n += len(r.Cells)
	}
	if n != 17+9 {
		t.Errorf("batch 10 limit 1 from r1: %d cells in all, want %d", n, 17+9)
	}
}

func testScannerClose(t *testing.T, e *env) {
	name := e.simple(1, "f")
	e.fill(name, 5)
	sc := e.scanner(name, store.Scan{})
	if r, ok := next(e.ctx, sc); !ok || string(r.Key) != "r00" {
		t.Fatalf("first Next: row %q ok=%v err=%v, want r00", r.Key, ok, sc.Err())
	}
	// Closing early, twice, is fine, and the scanner is then done.
	if err := sc.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := sc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if sc.Next(e.ctx) {
		t.Errorf("Next after Close returned a row")
	}
	// A drained scanner closes cleanly too.
	sc = e.scanner(name, store.Scan{})
	n := 0
	for sc.Next(e.ctx) {
		n++
	}
	if err := sc.Err(); err != nil {
		t.Errorf("Err after draining: %v", err)
	}
	if n != 5 {
		t.Errorf("drained %d rows, want 5", n)
	}
	if sc.Next(e.ctx) {
		t.Errorf("Next after the end returned a row")
	}
	for range 2 {
		if err := sc.Close(); err != nil {
			t.Errorf("Close of a drained scanner: %v", err)
		}
	}
}
