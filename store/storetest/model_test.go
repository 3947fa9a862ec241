package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

func put(f, q string, ts int64, v string) store.Mutation {
	return store.Mutation{Kind: store.Put, Family: f, Qualifier: []byte(q), Timestamp: ts, Value: []byte(v)}
}

func del(k store.Kind, f, q string, ts int64) store.Mutation {
	return store.Mutation{Kind: k, Family: f, Qualifier: []byte(q), Timestamp: ts}
}

func modelWith(t *testing.T, row string, ms ...store.Mutation) *model {
	t.Helper()
	m := newModel(store.TableSpec{Families: []store.FamilySpec{{Name: "a", MaxVersions: 2}, {Name: "b", MaxVersions: 5}}})
	for _, x := range ms {
		if err := m.apply(store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{x}}); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestModelMasking(t *testing.T) {
	cases := []struct {
		name string
		ms   []store.Mutation
		want []string
	}{
		{"version masks exactly its ts", []store.Mutation{put("b", "q", 10, "x"), put("b", "q", 20, "y"), del(store.DeleteVersion, "b", "q", 20)},
			[]string{"b:q@10=x"}},
		{"column masks at and below", []store.Mutation{put("b", "q", 10, "x"), put("b", "q", 20, "y"), put("b", "q", 30, "z"), del(store.DeleteColumn, "b", "q", 20)},
			[]string{"b:q@30=z"}},
		{"family spares other families", []store.Mutation{put("a", "q", 10, "x"), put("b", "q", 10, "y"), del(store.DeleteFamily, "a", "", 10)},
			[]string{"b:q@10=y"}},
		{"row covers every family", []store.Mutation{put("a", "q", 10, "x"), put("b", "q", 11, "y"), del(store.DeleteRow, "", "", 10)},
			[]string{"b:q@11=y"}},
		{"a marker masks later puts", []store.Mutation{del(store.DeleteColumn, "b", "q", 20), put("b", "q", 20, "late"), put("b", "q", 21, "above")},
			[]string{"b:q@21=above"}},
		{"same ts: the later put wins", []store.Mutation{put("b", "q", 5, "first"), put("b", "q", 5, "second")},
			[]string{"b:q@5=second"}},
		{"unmasked older versions count", []store.Mutation{put("a", "q", 1, "1"), put("a", "q", 2, "2"), put("a", "q", 3, "3"), del(store.DeleteVersion, "a", "q", 3)},
			[]string{"a:q@2=2", "a:q@1=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := modelWith(t, "r", c.ms...)
			expectCells(t, "read", m.read([]byte("r"), nil, 10, store.TimeRange{}, 0), cells("r", c.want...))
		})
	}
}

func TestModelVersionsAndTimeRange(t *testing.T) {
	m := modelWith(t, "r", put("a", "q", 1, "1"), put("a", "q", 2, "2"), put("a", "q", 3, "3"))
	expectCells(t, "capped by the family", m.read([]byte("r"), nil, 10, store.TimeRange{}, 0), cells("r", "a:q@3=3", "a:q@2=2"))
	expectCells(t, "one version", m.read([]byte("r"), nil, 0, store.TimeRange{}, 0), cells("r", "a:q@3=3"))
	// Before a flush, the time range is applied before version counting...
	expectCells(t, "time range first", m.read([]byte("r"), nil, 10, store.TimeRange{Max: 2}, 0), cells("r", "a:q@1=1"))
	// ...after one, the version beyond the maximum is gone.
	expectCells(t, "flushed", m.readFlushed([]byte("r"), nil, 10, store.TimeRange{Max: 2}, 0), nil)
	expectCells(t, "flushed, in range", m.readFlushed([]byte("r"), nil, 1, store.TimeRange{Min: 2}, 0), cells("r", "a:q@3=3"))
	expectCells(t, "column selection", m.read([]byte("r"), []store.Column{col("a", "other")}, 1, store.TimeRange{}, 0), nil)
	expectCells(t, "missing row", m.read([]byte("nope"), nil, 1, store.TimeRange{}, 0), nil)
}

func TestModelTTL(t *testing.T) {
	m := newModel(store.TableSpec{Families: []store.FamilySpec{{Name: "t", TTL: 10 * time.Second}}})
	if err := m.apply(store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{put("t", "q", 1000, "old"), put("t", "x", 15000, "new")}}); err != nil {
		t.Fatal(err)
	}
	expectCells(t, "at 20s", m.read([]byte("r"), nil, 1, store.TimeRange{}, 20_000), cells("r", "t:x@15000=new"))
	expectCells(t, "at 5s", m.read([]byte("r"), nil, 1, store.TimeRange{}, 5_000), cells("r", "t:q@1000=old", "t:x@15000=new"))
	m.majorCompact(20_000)
	expectCells(t, "compacted at 20s, read at 5s", m.read([]byte("r"), nil, 1, store.TimeRange{}, 5_000), cells("r", "t:x@15000=new"))
}

func TestModelMajorCompact(t *testing.T) {
	m := modelWith(t, "r",
		put("a", "q", 1, "1"), put("a", "q", 2, "2"), put("a", "q", 3, "3"),
		del(store.DeleteColumn, "b", "q", 20), put("b", "q", 10, "masked"))
	m.majorCompact(0)
	// The marker is gone: an old put is visible again.
	if err := m.apply(store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{put("b", "q", 10, "again"), del(store.DeleteVersion, "a", "q", 3)}}); err != nil {
		t.Fatal(err)
	}
	// The version at 1 was beyond the maximum of 2 and did not survive.
	expectCells(t, "after compaction", m.read([]byte("r"), nil, 10, store.TimeRange{}, 0), cells("r", "a:q@2=2", "b:q@10=again"))
	if err := m.apply(store.RowMutation{Row: []byte("gone"), Mutations: []store.Mutation{put("a", "q", 1, "x"), del(store.DeleteRow, "", "", 5)}}); err != nil {
		t.Fatal(err)
	}
	m.majorCompact(0)
	for _, k := range m.rowKeys() {
		if string(k) == "gone" {
			t.Errorf("a fully deleted row survived compaction")
		}
	}
}

func TestModelUnknownFamily(t *testing.T) {
	m := modelWith(t, "r")
	err := m.apply(store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{put("a", "q", 1, "x"), put("zz", "q", 1, "y")}})
	if !errors.Is(err, store.ErrFamilyNotFound) {
		t.Fatalf("err = %v, want ErrFamilyNotFound", err)
	}
	if got := m.read([]byte("r"), nil, 1, store.TimeRange{}, 0); len(got) != 0 {
		t.Errorf("a refused mutation partly applied: %s", cellsString(got))
	}
}

func TestModelAmbiguous(t *testing.T) {
	m := modelWith(t, "r", put("a", "q", 1, "1"), put("a", "q", 2, "2"), put("a", "q", 3, "3"))
	row := []byte("r")
	if !m.ambiguous(store.RowMutation{Row: row, Mutations: []store.Mutation{del(store.DeleteVersion, "a", "q", 3)}}) {
		t.Errorf("deleting the newest of three versions with a maximum of two should bring back a flush-dependent version")
	}
	if m.ambiguous(store.RowMutation{Row: row, Mutations: []store.Mutation{del(store.DeleteColumn, "a", "q", 3)}}) {
		t.Errorf("deleting the whole column exposes nothing")
	}
	if m.ambiguous(store.RowMutation{Row: row, Mutations: []store.Mutation{put("a", "q", 9, "9")}}) {
		t.Errorf("a new newest put is not ambiguous")
	}
	if m.ambiguous(store.RowMutation{Row: row, Mutations: []store.Mutation{del(store.DeleteVersion, "a", "q", 3), put("a", "q", 4, "4")}}) {
		t.Errorf("a delete made up for by a new put exposes nothing")
	}
	m.majorCompact(0)
	if m.ambiguous(store.RowMutation{Row: row, Mutations: []store.Mutation{del(store.DeleteVersion, "a", "q", 3)}}) {
		t.Errorf("after compaction the extra version is gone, nothing is ambiguous")
	}
}

func TestInScan(t *testing.T) {
	cases := []struct {
		s    store.Scan
		key  string
		want bool
	}{
		{store.Scan{}, "x", true},
		{store.Scan{Start: []byte("b"), Stop: []byte("d")}, "b", true},
		{store.Scan{Start: []byte("b"), Stop: []byte("d")}, "d", false},
		{store.Scan{Start: []byte("b"), Stop: []byte("d")}, "c\xff", true},
		{store.Scan{Start: []byte("d"), Stop: []byte("b"), Reverse: true}, "d", true},
		{store.Scan{Start: []byte("d"), Stop: []byte("b"), Reverse: true}, "b", false},
		{store.Scan{Start: []byte("d"), Reverse: true}, "d\x00", false},
		{store.Scan{Stop: []byte("b"), Reverse: true}, "\xff", true},
	}
	for _, c := range cases {
		if got := inScan(c.s, []byte(c.key)); got != c.want {
			t.Errorf("inScan(%s, %q) = %v, want %v", describeScan(c.s), c.key, got, c.want)
		}
	}
}

func TestCellSpecs(t *testing.T) {
	got := cells("r", "f:q@5=a@b=c", "g:@-1=")
	want := []store.Cell{
		{Row: []byte("r"), Family: "f", Qualifier: []byte("q"), Timestamp: 5, Value: []byte("a@b=c")},
		{Row: []byte("r"), Family: "g", Qualifier: []byte(""), Timestamp: -1, Value: []byte("")},
	}
	if !sameCells(got, want) {
		t.Errorf("cells() = %s, want %s", cellsString(got), cellsString(want))
	}
}
