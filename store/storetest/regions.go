package storetest

import (
	"bytes"
	"testing"

	"github.com/denorm/denorm/store"
)

var regionTests = []testCase{
	{"RegionsFromSplitKeys", testRegionsSplits},
	{"RegionsSingle", testRegionsSingle},
	{"RegionRequestCounts", testRegionCounts},
}

var testSplits = [][]byte{[]byte("d"), []byte("m\x00"), []byte("t")}

func (e *env) regions(table string) []store.Region {
	e.t.Helper()
	rs, err := e.st.Regions(e.ctx, table)
	if err != nil {
		e.t.Fatalf("Regions(%s): %v", table, err)
	}
	return rs
}

func testRegionsSplits(t *testing.T, e *env) {
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f"}}, SplitKeys: testSplits})
	rs := e.regions(name)
	if len(rs) != len(testSplits)+1 {
		t.Fatalf("%d regions for %d split keys, want %d: %+v", len(rs), len(testSplits), len(testSplits)+1, rs)
	}
	bounds := append([][]byte{nil}, testSplits...)
	bounds = append(bounds, nil)
	ids := map[string]bool{}
	for i, r := range rs {
		if !bytes.Equal(r.Start, bounds[i]) || !bytes.Equal(r.End, bounds[i+1]) {
			t.Errorf("region %d is [%s, %s), want [%s, %s)", i, store.Printable(r.Start), store.Printable(r.End),
				store.Printable(bounds[i]), store.Printable(bounds[i+1]))
		}
		if r.Table != name {
			t.Errorf("region %d names table %q, want %q", i, r.Table, name)
		}
		if r.ID == "" || ids[r.ID] {
			t.Errorf("region %d has an empty or repeated ID %q", i, r.ID)
		}
		ids[r.ID] = true
	}
	// Every key is in exactly one region: the one whose range holds it.
	for _, k := range []string{"\x00", "a", "c\xff", "d", "d\x00", "m", "m\x00", "m\x00\x00", "s", "t", "\xff\xff"} {
		var in []int
		for i, r := range rs {
			if r.Contains([]byte(k)) {
				in = append(in, i)
			}
		}
		if len(in) != 1 {
			t.Errorf("key %s is in regions %v, want exactly one", store.Printable([]byte(k)), in)
		}
	}
	// Region boundaries do not disturb reads across them.
	for _, k := range []string{"c", "d", "m", "m\x00", "z"} {
		e.put(name, k, "f", "q", 1, k)
	}
	expectKeys(t, "scan across regions", e.scan(name, store.Scan{}), "c", "d", "m", "m\x00", "z")
	expectKeys(t, "reverse scan across regions", e.scan(name, store.Scan{Reverse: true}), "z", "m\x00", "m", "d", "c")
	expectKeys(t, "scan [c, m\\x00)", e.scan(name, store.Scan{Start: []byte("c"), Stop: []byte("m\x00")}), "c", "d", "m")
}

func testRegionsSingle(t *testing.T, e *env) {
	name := e.simple(1, "f")
	rs := e.regions(name)
	if len(rs) != 1 || len(rs[0].Start) != 0 || len(rs[0].End) != 0 {
		t.Fatalf("a table without split keys has regions %+v, want one covering everything", rs)
	}
	for _, k := range []string{"\x00", "m", "\xff\xff\xff"} {
		if !rs[0].Contains([]byte(k)) {
			t.Errorf("the only region does not contain %s", store.Printable([]byte(k)))
		}
	}
}

func testRegionCounts(t *testing.T, e *env) {
	if !e.h.RegionCounts {
		t.Skip("the harness says this backend does not report live region request counts")
	}
	name := e.create(store.TableSpec{Families: []store.FamilySpec{{Name: "f"}}, SplitKeys: testSplits})
	counts := func() ([]int64, []int64) {
		rs := e.regions(name)
		var rd, wr []int64
		for _, r := range rs {
			rd = append(rd, r.ReadRequests)
			wr = append(wr, r.WriteRequests)
		}
		return rd, wr
	}
	// Rows to find, so that reads count however a backend counts them.
	e.put(name, "b", "f", "q", 1, "v")
	e.put(name, "v", "f", "q", 1, "v")
	rd0, wr0 := counts()
	// A write to region 2 ([m\x00, t)).
	e.put(name, "p", "f", "q", 1, "v")
	rd1, wr1 := counts()
	for i := range wr1 {
		switch {
		case i == 2 && wr1[i] <= wr0[i]:
			t.Errorf("a write to region 2 left its write count at %d", wr1[i])
		case i != 2 && wr1[i] != wr0[i]:
			t.Errorf("a write to region 2 moved region %d's write count from %d to %d", i, wr0[i], wr1[i])
		}
		if rd1[i] != rd0[i] {
			t.Errorf("a write moved region %d's read count from %d to %d", i, rd0[i], rd1[i])
		}
	}
	// A read in region 0 ([, d)).
	e.get(name, store.Get{Row: []byte("b")})
	rd2, wr2 := counts()
	for i := range rd2 {
		switch {
		case i == 0 && rd2[i] <= rd1[i]:
			t.Errorf("a read in region 0 left its read count at %d", rd2[i])
		case i != 0 && rd2[i] != rd1[i]:
			t.Errorf("a read in region 0 moved region %d's read count from %d to %d", i, rd1[i], rd2[i])
		}
		if wr2[i] != wr1[i] {
			t.Errorf("a read moved region %d's write count from %d to %d", i, wr1[i], wr2[i])
		}
	}
	// A scan of region 3 only.
	e.scan(name, store.Scan{Start: []byte("u")})
	rd3, _ := counts()
	for i := range rd3 {
		if i == 3 && rd3[i] <= rd2[i] {
			t.Errorf("a scan of region 3 left its read count at %d", rd3[i])
		}
		if i != 3 && rd3[i] != rd2[i] {
			t.Errorf("a scan of region 3 moved region %d's read count from %d to %d", i, rd2[i], rd3[i])
		}
	}
}
