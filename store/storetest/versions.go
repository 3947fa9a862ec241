package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var getTests = []testCase{
	{"GetColumns", testGetColumns},
	{"GetMaxVersionsCapped", testGetMaxVersions},
	{"GetTimeRange", testGetTimeRange},
}

var versionTests = []testCase{
	{"ExplicitTimestampsNewestFirst", testExplicitTimestamps},
	{"SameTimestampLaterWriteWins", testSameTimestamp},
	{"LatestTimestampUsesServerClock", testLatestTimestamp},
}

func testGetColumns(t *testing.T, e *env) {
	name := e.simple(1, "a", "b", "c")
	e.mutate(name, store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "a", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("ax")},
		{Kind: store.Put, Family: "a", Qualifier: []byte("y"), Timestamp: 1, Value: []byte("ay")},
		{Kind: store.Put, Family: "b", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("bx")},
		{Kind: store.Put, Family: "b", Qualifier: []byte("y"), Timestamp: 1, Value: []byte("by")},
		{Kind: store.Put, Family: "c", Qualifier: []byte("z"), Timestamp: 1, Value: []byte("cz")},
	}})
	get := func(cols ...store.Column) []store.Cell {
		return e.get(name, store.Get{Row: []byte("r"), Columns: cols}).Cells
	}
	expectCells(t, "all", get(), cells("r", "a:x@1=ax", "a:y@1=ay", "b:x@1=bx", "b:y@1=by", "c:z@1=cz"))
	expectCells(t, "family b", get(fam("b")), cells("r", "b:x@1=bx", "b:y@1=by"))
	expectCells(t, "a:y", get(col("a", "y")), cells("r", "a:y@1=ay"))
	expectCells(t, "a:x and a:y", get(col("a", "y"), col("a", "x")), cells("r", "a:x@1=ax", "a:y@1=ay"))
	expectCells(t, "family c and b:y", get(fam("c"), col("b", "y")), cells("r", "b:y@1=by", "c:z@1=cz"))
	expectCells(t, "a:missing", get(col("a", "missing")), nil)
}

func testGetMaxVersions(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "two", MaxVersions: 2}, {Name: "one"}}})
	for ts := int64(1); ts <= 4; ts++ {
		e.mutate(name, store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
			{Kind: store.Put, Family: "two", Qualifier: []byte("q"), Timestamp: ts, Value: []byte(fmt.Sprint(ts))},
			{Kind: store.Put, Family: "one", Qualifier: []byte("q"), Timestamp: ts, Value: []byte(fmt.Sprint(ts))},
		}})
	}
	get := func(versions int) []store.Cell {
		return e.get(name, store.Get{Row: []byte("r"), MaxVersions: versions}).Cells
	}
	expectCells(t, "default versions", get(0), cells("r", "one:q@4=4", "two:q@4=4"))
	expectCells(t, "1 version", get(1), cells("r", "one:q@4=4", "two:q@4=4"))
	expectCells(t, "2 versions", get(2), cells("r", "one:q@4=4", "two:q@4=4", "two:q@3=3"))
	// Each family caps the request at what it keeps (VERSIONS=1 is HBase 2's default).
	expectCells(t, "10 versions", get(10), cells("r", "one:q@4=4", "two:q@4=4", "two:q@3=3"))
}

func testGetTimeRange(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 5}}})
	for ts := int64(10); ts <= 40; ts += 10 {
		e.put(name, "r", "f", "q", ts, fmt.Sprint(ts))
	}
	e.put(name, "r", "f", "p", 40, "p40")
	get := func(tr store.TimeRange, versions int) []store.Cell {
		return e.get(name, store.Get{Row: []byte("r"), TimeRange: tr, MaxVersions: versions}).Cells
	}
	expectCells(t, "[20,40) 5 versions", get(store.TimeRange{Min: 20, Max: 40}, 5), cells("r", "f:q@30=30", "f:q@20=20"))
	expectCells(t, "[20,40) 1 version", get(store.TimeRange{Min: 20, Max: 40}, 1), cells("r", "f:q@30=30"))
	expectCells(t, "[10,11) min is inclusive", get(store.TimeRange{Min: 10, Max: 11}, 5), cells("r", "f:q@10=10"))
	expectCells(t, "[11,20) max is exclusive", get(store.TimeRange{Min: 11, Max: 20}, 5), nil)
	expectCells(t, "[35,inf)", get(store.TimeRange{Min: 35}, 5), cells("r", "f:p@40=p40", "f:q@40=40"))
	expectCells(t, "zero range is everything", get(store.TimeRange{}, 5),
		cells("r", "f:p@40=p40", "f:q@40=40", "f:q@30=30", "f:q@20=20", "f:q@10=10"))
}

func testExplicitTimestamps(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 10}}})
	// Written out of order; far apart, including 0 and HBase-style ms.
	for _, ts := range []int64{5, 1_700_000_000_000, 0, 50, 20} {
		e.put(name, "r", "f", "q", ts, fmt.Sprint(ts))
	}
	got := e.get(name, store.Get{Row: []byte("r"), MaxVersions: 10}).Cells
	expectCells(t, "versions newest first", got,
		cells("r", "f:q@1700000000000=1700000000000", "f:q@50=50", "f:q@20=20", "f:q@5=5", "f:q@0=0"))
	latest, ok := e.get(name, store.Get{Row: []byte("r")}).Latest("f", []byte("q"))
	if !ok || latest.Timestamp != 1_700_000_000_000 {
		t.Errorf("Latest = %s (found %v), want the cell at 1700000000000", cellString(latest), ok)
	}
}

func testSameTimestamp(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}}})
	e.put(name, "r", "f", "q", 10, "first")
	e.put(name, "r", "f", "q", 10, "second")
	e.put(name, "r", "f", "q", 5, "older")
	want := cells("r", "f:q@10=second", "f:q@5=older")
	expectCells(t, "after two puts at ts 10", e.get(name, store.Get{Row: []byte("r"), MaxVersions: 3}).Cells, want)
	// Inside one row mutation the later mutation wins as well.
	e.mutate(name, store.RowMutation{Row: []byte("s"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 7, Value: []byte("a")},
		{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 7, Value: []byte("b")},
	}})
	expectCells(t, "one mutation, two puts at ts 7", e.get(name, store.Get{Row: []byte("s"), MaxVersions: 3}).Cells, cells("s", "f:q@7=b"))
	if e.tryCompact(name) {
		expectCells(t, "after major compaction", e.get(name, store.Get{Row: []byte("r"), MaxVersions: 3}).Cells, want)
	}
}

// clockWindow is how far a server's clock may be from ours: the real HBase
// the suite runs against is on the same machine.
const clockWindow = time.Minute

func testLatestTimestamp(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}}})
	before := nowMillis()
	e.put(name, "r", "f", "q", store.LatestTimestamp, "v1")
	after := nowMillis()
	c, ok := e.get(name, store.Get{Row: []byte("r")}).Latest("f", []byte("q"))
	if !ok {
		t.Fatalf("cell written with LatestTimestamp is not visible")
	}
	if c.Timestamp == store.LatestTimestamp || c.Timestamp < before-clockWindow.Milliseconds() || c.Timestamp > after+clockWindow.Milliseconds() {
		t.Errorf("LatestTimestamp stamped %d; want the server's clock in ms, near [%d, %d]", c.Timestamp, before, after)
	}
	// A second write, in the same millisecond or not, is the one read.
	e.put(name, "r", "f", "q", store.LatestTimestamp, "v2")
	c, _ = e.get(name, store.Get{Row: []byte("r")}).Latest("f", []byte("q"))
	if string(c.Value) != "v2" {
		t.Errorf("after a second LatestTimestamp put: %s, want value v2", cellString(c))
	}
	// A delete with LatestTimestamp removes what is there now.
	e.del(name, "r", store.DeleteColumn, "f", "q", store.LatestTimestamp)
	if r := e.get(name, store.Get{Row: []byte("r"), MaxVersions: 3}); !r.Empty() {
		t.Errorf("after DeleteColumn at LatestTimestamp: %s, want nothing", cellsString(r.Cells))
	}
}
