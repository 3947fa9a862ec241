package storetest

import (
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var deleteTests = []testCase{
	{"DeleteVersion", testDeleteVersion},
	{"DeleteColumn", testDeleteColumn},
	{"DeleteFamily", testDeleteFamily},
	{"DeleteRow", testDeleteRow},
	{"DeleteVersionAtLatestTimestamp", testDeleteLatestVersion},
	{"DeleteMarkerMasksLaterPuts", testMaskLaterPuts},
	{"MajorCompactPurgesMarkers", testCompactPurgesMarkers},
	{"MajorCompactDropsExtraVersions", testCompactDropsVersions},
	{"MajorCompactDropsExpiredCells", testCompactDropsExpired},
}

// deleteFixture is two families of five versions with three columns:
// a:q at 10, 20, 30; a:p at 20; b:x at 10 and 25.
func deleteFixture(e *env) string {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "a", MaxVersions: 5}, {Name: "b", MaxVersions: 5}}})
	for _, row := range []string{"r", "other"} {
		e.mutate(name, store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
			{Kind: store.Put, Family: "a", Qualifier: []byte("q"), Timestamp: 10, Value: []byte("q10")},
			{Kind: store.Put, Family: "a", Qualifier: []byte("q"), Timestamp: 20, Value: []byte("q20")},
			{Kind: store.Put, Family: "a", Qualifier: []byte("q"), Timestamp: 30, Value: []byte("q30")},
			{Kind: store.Put, Family: "a", Qualifier: []byte("p"), Timestamp: 20, Value: []byte("p20")},
			{Kind: store.Put, Family: "b", Qualifier: []byte("x"), Timestamp: 10, Value: []byte("x10")},
			{Kind: store.Put, Family: "b", Qualifier: []byte("x"), Timestamp: 25, Value: []byte("x25")},
		}})
	}
	return name
}

var fixtureCells = []string{"a:p@20=p20", "a:q@30=q30", "a:q@20=q20", "a:q@10=q10", "b:x@25=x25", "b:x@10=x10"}

func (e *env) all(table, row string) []store.Cell {
	e.t.Helper()
	return e.get(table, store.Get{Row: []byte(row), MaxVersions: 10}).Cells
}

// checkOther makes sure a delete stayed inside its row.
func checkOther(t *testing.T, e *env, name string) {
	t.Helper()
	expectCells(t, "the untouched neighbour row", e.all(name, "other"), cells("other", fixtureCells...))
}

func testDeleteVersion(t *testing.T, e *env) {
	name := deleteFixture(e)
	e.del(name, "r", store.DeleteVersion, "a", "q", 20)
	expectCells(t, "after DeleteVersion a:q@20", e.all(name, "r"),
		cells("r", "a:p@20=p20", "a:q@30=q30", "a:q@10=q10", "b:x@25=x25", "b:x@10=x10"))
	// A version that does not exist: nothing else goes.
	e.del(name, "r", store.DeleteVersion, "a", "q", 25)
	expectCells(t, "after DeleteVersion a:q@25 (no such version)", e.all(name, "r"),
		cells("r", "a:p@20=p20", "a:q@30=q30", "a:q@10=q10", "b:x@25=x25", "b:x@10=x10"))
	// Deleting the newest version leaves the older ones readable.
	e.del(name, "r", store.DeleteVersion, "a", "q", 30)
	expectCells(t, "after DeleteVersion a:q@30", e.get(name, store.Get{Row: []byte("r"), Columns: []store.Column{col("a", "q")}}).Cells,
		cells("r", "a:q@10=q10"))
	checkOther(t, e, name)
}

func testDeleteColumn(t *testing.T, e *env) {
	name := deleteFixture(e)
	e.del(name, "r", store.DeleteColumn, "a", "q", 20)
	expectCells(t, "after DeleteColumn a:q<=20", e.all(name, "r"),
		cells("r", "a:p@20=p20", "a:q@30=q30", "b:x@25=x25", "b:x@10=x10"))
	e.del(name, "r", store.DeleteColumn, "a", "q", 1000)
	expectCells(t, "after DeleteColumn a:q<=1000", e.all(name, "r"),
		cells("r", "a:p@20=p20", "b:x@25=x25", "b:x@10=x10"))
	checkOther(t, e, name)
}

func testDeleteFamily(t *testing.T, e *env) {
	name := deleteFixture(e)
	e.del(name, "r", store.DeleteFamily, "a", "", 20)
	expectCells(t, "after DeleteFamily a<=20", e.all(name, "r"),
		cells("r", "a:q@30=q30", "b:x@25=x25", "b:x@10=x10"))
	e.del(name, "r", store.DeleteFamily, "b", "", 1000)
	expectCells(t, "after DeleteFamily b<=1000", e.all(name, "r"), cells("r", "a:q@30=q30"))
	checkOther(t, e, name)
}

func testDeleteRow(t *testing.T, e *env) {
	name := deleteFixture(e)
	e.del(name, "r", store.DeleteRow, "", "", 20)
	expectCells(t, "after DeleteRow <=20", e.all(name, "r"), cells("r", "a:q@30=q30", "b:x@25=x25"))
	expectKeys(t, "scan after a partial DeleteRow", e.scan(name, store.Scan{}), "other", "r")
	e.del(name, "r", store.DeleteRow, "", "", 1000)
	if got := e.all(name, "r"); len(got) != 0 {
		t.Errorf("after DeleteRow <=1000: %s, want nothing", cellsString(got))
	}
	// A deleted row is gone from scans too, forwards and backwards.
	expectKeys(t, "scan after DeleteRow", e.scan(name, store.Scan{}), "other")
	expectKeys(t, "reverse scan after DeleteRow", e.scan(name, store.Scan{Reverse: true}), "other")
	checkOther(t, e, name)
}

// masking is one delete marker and the coordinates it should hide.
type masking struct {
	row              string
	kind             store.Kind
	family, qualifer string
}

var maskings = []masking{
	{"version", store.DeleteVersion, "a", "q"},
	{"column", store.DeleteColumn, "a", "q"},
	{"family", store.DeleteFamily, "a", ""},
	{"row", store.DeleteRow, "", ""},
}

func testMaskLaterPuts(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "a", MaxVersions: 5}, {Name: "b", MaxVersions: 5}}})
	for _, m := range maskings {
		e.del(name, m.row, m.kind, m.family, m.qualifer, 20)
		// Written after the marker: at, below and above its timestamp.
		for _, ts := range []int64{15, 20, 25} {
			e.mutate(name, store.RowMutation{Row: []byte(m.row), Mutations: []store.Mutation{
				{Kind: store.Put, Family: "a", Qualifier: []byte("q"), Timestamp: ts, Value: []byte("v")},
				{Kind: store.Put, Family: "a", Qualifier: []byte("other"), Timestamp: ts, Value: []byte("o")},
				{Kind: store.Put, Family: "b", Qualifier: []byte("q"), Timestamp: ts, Value: []byte("b")},
			}})
		}
	}
	want := map[string][]string{
		// Only the version at exactly 20.
		"version": {"a:other@25=o", "a:other@20=o", "a:other@15=o", "a:q@25=v", "a:q@15=v", "b:q@25=b", "b:q@20=b", "b:q@15=b"},
		"column":  {"a:other@25=o", "a:other@20=o", "a:other@15=o", "a:q@25=v", "b:q@25=b", "b:q@20=b", "b:q@15=b"},
		"family":  {"a:other@25=o", "a:q@25=v", "b:q@25=b", "b:q@20=b", "b:q@15=b"},
		"row":     {"a:other@25=o", "a:q@25=v", "b:q@25=b"},
	}
	for _, m := range maskings {
		expectCells(t, "puts written after a "+m.kind.String()+" marker at 20", e.all(name, m.row), cells(m.row, want[m.row]...))
	}
}

func testCompactPurgesMarkers(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "a", MaxVersions: 5}, {Name: "b", MaxVersions: 5}}})
	for _, m := range maskings {
		e.put(name, m.row, "a", "q", 20, "before")
		e.put(name, m.row, "b", "keep", 30, "keep")
		e.del(name, m.row, m.kind, m.family, m.qualifer, 20)
		e.put(name, m.row, "a", "q", 20, "masked")
	}
	e.compact(name)
	for _, m := range maskings {
		// The masked puts went with the marker...
		expectCells(t, "after compaction, "+m.kind.String(), e.all(name, m.row), cells(m.row, "b:keep@30=keep"))
		// ...and the same coordinates can be written again.
		e.put(name, m.row, "a", "q", 20, "again")
		e.put(name, m.row, "a", "q", 10, "older")
		expectCells(t, "a put at the marker's old timestamp after compaction, "+m.kind.String(), e.all(name, m.row),
			cells(m.row, "a:q@20=again", "a:q@10=older", "b:keep@30=keep"))
	}
}

func testCompactDropsVersions(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 2}}})
	for _, ts := range []int64{10, 20, 30} {
		e.put(name, "r", "f", "q", ts, "v")
	}
	expectCells(t, "before compaction", e.all(name, "r"), cells("r", "f:q@30=v", "f:q@20=v"))
	e.compact(name)
	expectCells(t, "after compaction", e.all(name, "r"), cells("r", "f:q@30=v", "f:q@20=v"))
	// Had the version at 10 survived, deleting the newest would bring it
	// back (as HBase does before a flush). After a major compaction it is
	// gone for good.
	e.del(name, "r", store.DeleteVersion, "f", "q", 30)
	expectCells(t, "after compaction and deleting the newest version", e.all(name, "r"), cells("r", "f:q@20=v"))
}

func testCompactDropsExpired(t *testing.T, e *env) {
	ttl := 30 * time.Second
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "t", TTL: ttl, MaxVersions: 3}, {Name: "k"}}})
	now := nowMillis()
	old := now - time.Hour.Milliseconds()
	e.put(name, "r", "t", "q", old, "expired")
	e.put(name, "r", "t", "q", now, "fresh")
	e.put(name, "r", "k", "q", old, "forever")
	e.put(name, "gone", "t", "q", old, "expired")
	want := cells("r", "k:q@"+itoa(old)+"=forever", "t:q@"+itoa(now)+"=fresh")
	expectCells(t, "before compaction", e.all(name, "r"), want)
	e.compact(name)
	// The purge itself cannot be seen through the interface: what can is
	// that compaction neither brings expired cells back nor loses live ones.
	expectCells(t, "after compaction", e.all(name, "r"), want)
	expectKeys(t, "scan after compaction", e.scan(name, store.Scan{}), "r")
	got := e.get(name, store.Get{Row: []byte("r"), TimeRange: store.TimeRange{Max: old + 1}, MaxVersions: 3}).Cells
	expectCells(t, "the expired cell's time range after compaction", got, cells("r", "k:q@"+itoa(old)+"=forever"))
}

func testDeleteLatestVersion(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f", MaxVersions: 3}, {Name: "g"}}})
	e.put(name, "r", "f", "q", 10, "old")
	e.put(name, "r", "f", "q", 20, "new")
	e.put(name, "r", "g", "q", 5, "g")
	// HBase's Delete.addColumn without a timestamp: the server turns it into
	// a delete of the newest version, at that version's timestamp.
	e.del(name, "r", store.DeleteVersion, "f", "q", store.LatestTimestamp)
	expectCells(t, "after DeleteVersion at LatestTimestamp", e.all(name, "r"), cells("r", "f:q@10=old", "g:q@5=g"))
	// A row delete at LatestTimestamp is one at the server's clock.
	e.del(name, "r", store.DeleteRow, "", "", store.LatestTimestamp)
	if got := e.all(name, "r"); len(got) != 0 {
		t.Errorf("after DeleteRow at LatestTimestamp: %s, want nothing", cellsString(got))
	}
	e.put(name, "r", "f", "q", nowMillis()+time.Hour.Milliseconds(), "future")
	if got := e.all(name, "r"); len(got) != 1 {
		t.Errorf("a put newer than the row delete: %s, want it visible", cellsString(got))
	}
}
