package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var settingsTests = []testCase{
	{"FamilyMinVersionsOutliveTTL", testMinVersions},
	{"TableMaxRowSize", testTableMaxRowSize},
	{"SettingsRoundTrip", testSettingsRoundTrip},
}

// MIN_VERSIONS: the newest versions of a column survive the TTL, older
// ones expire; a family without it loses them all.
func testMinVersions(t *testing.T, e *env) {
	skipWithoutSettings(t, e)
	name := e.create(store.TableSpec{Families: []store.FamilySpec{
		{Name: "m", TTL: 30 * time.Second, MaxVersions: 5, MinVersions: 2},
		{Name: "z", TTL: 30 * time.Second, MaxVersions: 5},
	}})
	old := nowMillis() - time.Hour.Milliseconds()
	for i := int64(0); i < 4; i++ {
		e.put(name, "r", "m", "q", old+i, itoa(i))
		e.put(name, "r", "z", "q", old+i, itoa(i))
	}
	want := cells("r", "m:q@"+itoa(old+3)+"=3", "m:q@"+itoa(old+2)+"=2")
	expectCells(t, "Get with 5 versions", e.get(name, store.Get{Row: []byte("r"), MaxVersions: 5}).Cells, want)
	rows := e.scan(name, store.Scan{MaxVersions: 5})
	if len(rows) != 1 {
		t.Fatalf("scan: %d rows, want 1", len(rows))
	}
	expectCells(t, "Scan with 5 versions", rows[0].Cells, want)
}

// A table's own max row size fails reads of bigger rows, below the
// store-wide limit.
func testTableMaxRowSize(t *testing.T, e *env) {
	skipWithoutSettings(t, e)
	const limit = 64 << 10
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f"}}, MaxRowSize: limit})
	value := make([]byte, 8<<10)
	for i := 0; i < 2*limit/len(value); i++ {
		e.put(name, "wide", "f", fmt.Sprintf("q%03d", i), 1, string(value))
	}
	e.put(name, "small", "f", "q", 1, "s")
	if _, err := e.st.Get(e.ctx, name, store.Get{Row: []byte("wide")}); !errors.Is(err, store.ErrRowTooBig) {
		t.Errorf("Get of a %d-byte row with a %d-byte table limit: err = %v, want ErrRowTooBig", 2*limit, limit, err)
	}
	expectCells(t, "the small row", e.get(name, store.Get{Row: []byte("small")}).Cells, cells("small", "f:q@1=s"))
}

// The settings HBase keeps for a family and a table come back from
// DescribeTable as they were given.
func testSettingsRoundTrip(t *testing.T, e *env) {
	skipWithoutSettings(t, e)
	spec := store.TableSpec{
		Families: []store.FamilySpec{
			{Name: "b", MOB: true, MOBThreshold: 200 << 10, NoBlockCache: true},
			{Name: "t", TTL: time.Hour, MaxVersions: 3, MinVersions: 1, Compaction: store.CompactionDateTiered},
		},
		SplitPolicy: store.SplitDisabled,
		MaxRowSize:  32 << 20,
	}
	name := e.create(spec)
	got, err := e.st.DescribeTable(e.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got.SplitPolicy != spec.SplitPolicy || got.MaxRowSize != spec.MaxRowSize {
		t.Errorf("table settings: split policy %q max row size %d, want %q %d", got.SplitPolicy, got.MaxRowSize, spec.SplitPolicy, spec.MaxRowSize)
	}
	for _, want := range spec.Families {
		f, ok := got.Family(want.Name)
		if !ok {
			t.Errorf("family %s missing", want.Name)
			continue
		}
		if f.MOB != want.MOB || f.MOBThreshold != want.MOBThreshold || f.NoBlockCache != want.NoBlockCache ||
			f.MinVersions != want.MinVersions || f.Compaction != want.Compaction {
			t.Errorf("family %s: got %+v, want %+v", want.Name, f, want)
		}
	}
	// A family written through MOB reads back like any other.
	big := string(make([]byte, 300<<10))
	e.put(name, "r", "b", "q", 1, big)
	if c, ok := e.get(name, store.Get{Row: []byte("r")}).Latest("b", []byte("q")); !ok || len(c.Value) != len(big) {
		t.Errorf("a MOB cell did not round-trip")
	}
}

func skipWithoutSettings(t *testing.T, e *env) {
	if e.h.NoSettings {
		t.Skip("the store keeps no settings beyond versions and TTL (Harness.NoSettings)")
	}
}
