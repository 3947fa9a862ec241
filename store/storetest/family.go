package storetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var familyTests = []testCase{
	{"FamilyMaxVersionsAtRead", testFamilyMaxVersions},
	{"FamilyTTLAtRead", testFamilyTTL},
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func testFamilyMaxVersions(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "three", MaxVersions: 3}, {Name: "dflt"}}})
	for ts := int64(1); ts <= 5; ts++ {
		e.mutate(name, store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
			{Kind: store.Put, Family: "three", Qualifier: []byte("q"), Timestamp: ts, Value: []byte(itoa(ts))},
			{Kind: store.Put, Family: "dflt", Qualifier: []byte("q"), Timestamp: ts, Value: []byte(itoa(ts))},
		}})
	}
	want := cells("r", "dflt:q@5=5", "three:q@5=5", "three:q@4=4", "three:q@3=3")
	expectCells(t, "Get with 10 versions", e.all(name, "r"), want)
	rows := e.scan(name, store.Scan{MaxVersions: 10})
	if len(rows) != 1 {
		t.Fatalf("scan: %d rows, want 1", len(rows))
	}
	expectCells(t, "Scan with 10 versions", rows[0].Cells, want)
}

func testFamilyTTL(t *testing.T, e *env) {
	ttl := 30 * time.Second
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "t", TTL: ttl, MaxVersions: 3}, {Name: "k"}}})
	now := nowMillis()
	old := now - time.Hour.Milliseconds()
	recent := now - 5*time.Second.Milliseconds()
	e.mutate(name, store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "t", Qualifier: []byte("q"), Timestamp: old, Value: []byte("expired")},
		{Kind: store.Put, Family: "t", Qualifier: []byte("q"), Timestamp: recent, Value: []byte("recent")},
		{Kind: store.Put, Family: "t", Qualifier: []byte("q"), Timestamp: now, Value: []byte("fresh")},
		{Kind: store.Put, Family: "t", Qualifier: []byte("only-old"), Timestamp: old, Value: []byte("expired")},
		{Kind: store.Put, Family: "k", Qualifier: []byte("q"), Timestamp: old, Value: []byte("forever")},
	}})
	e.put(name, "expired-row", "t", "q", old, "expired")
	e.put(name, "expired-row", "t", "q", 1, "ancient")

	want := cells("r", "k:q@"+itoa(old)+"=forever", "t:q@"+itoa(now)+"=fresh", "t:q@"+itoa(recent)+"=recent")
	expectCells(t, "Get", e.all(name, "r"), want)
	if r := e.get(name, store.Get{Row: []byte("expired-row"), MaxVersions: 3}); !r.Empty() {
		t.Errorf("Get of a row with only expired cells: %s, want nothing", cellsString(r.Cells))
	}
	rows := e.scan(name, store.Scan{MaxVersions: 3})
	expectKeys(t, "scan", rows, "r")
	if len(rows) == 1 {
		expectCells(t, "scan", rows[0].Cells, want)
	}
	// An expired cell does not come back when the read asks for old times.
	got := e.get(name, store.Get{Row: []byte("r"), Columns: []store.Column{fam("t")}, TimeRange: store.TimeRange{Max: recent}, MaxVersions: 3})
	if !got.Empty() {
		t.Errorf("Get of family t before %d: %s, want nothing", recent, cellsString(got.Cells))
	}
	// The TTL is measured against the cell timestamp, not the write time:
	// a put that arrives now with an old timestamp is born expired.
	e.put(name, "late", "t", "q", now-2*ttl.Milliseconds(), "late")
	if r := e.get(name, store.Get{Row: []byte("late")}); !r.Empty() {
		t.Errorf("a put with a timestamp older than the TTL is visible: %s", cellsString(r.Cells))
	}
}
