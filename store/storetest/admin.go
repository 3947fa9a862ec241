package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

var adminTests = []testCase{
	{"CreateDescribeRoundTrip", testCreateDescribe},
	{"ListTablesSorted", testListSorted},
	{"DropTable", testDropTable},
	{"CreateTwice", testCreateTwice},
	{"MissingTable", testMissingTable},
	{"UnknownFamily", testUnknownFamily},
}

func testCreateDescribe(t *testing.T, e *env) {
	spec := store.TableSpec{
		Families: []store.FamilySpec{
			{Name: "d", MaxVersions: 3, TTL: time.Hour, Compression: "GZ", DataBlockEncoding: "FAST_DIFF",
				BlockSize: 32 << 10, BloomFilter: "ROWCOL", InMemory: true},
			{Name: "e"},
		},
		SplitKeys: [][]byte{[]byte("g"), []byte("p\x00"), []byte("\xf0")},
	}
	name := e.create(spec)
	got, err := e.st.DescribeTable(e.ctx, name)
	if err != nil {
		t.Fatalf("DescribeTable(%s): %v", name, err)
	}
	if got.Name != name {
		t.Errorf("DescribeTable name = %q, want %q", got.Name, name)
	}
	if len(got.Families) != len(spec.Families) {
		t.Errorf("DescribeTable families = %+v, want %d of them", got.Families, len(spec.Families))
	}
	for _, want := range spec.Families {
		f, ok := got.Family(want.Name)
		if !ok {
			t.Errorf("DescribeTable lost family %q", want.Name)
			continue
		}
		// A backend may fill in its defaults (HBase reports NONE, ROW,
		// 65536...), so only settings the spec gave are compared.
		if f.Versions() != want.Versions() {
			t.Errorf("family %s: versions %d, want %d", want.Name, f.Versions(), want.Versions())
		}
		if f.TTL != want.TTL {
			t.Errorf("family %s: TTL %v, want %v", want.Name, f.TTL, want.TTL)
		}
		if want.Compression != "" && f.Compression != want.Compression {
			t.Errorf("family %s: compression %q, want %q", want.Name, f.Compression, want.Compression)
		}
		if want.DataBlockEncoding != "" && f.DataBlockEncoding != want.DataBlockEncoding {
			t.Errorf("family %s: data block encoding %q, want %q", want.Name, f.DataBlockEncoding, want.DataBlockEncoding)
		}
		if want.BlockSize != 0 && f.BlockSize != want.BlockSize {
			t.Errorf("family %s: block size %d, want %d", want.Name, f.BlockSize, want.BlockSize)
		}
		if want.BloomFilter != "" && f.BloomFilter != want.BloomFilter {
			t.Errorf("family %s: bloom filter %q, want %q", want.Name, f.BloomFilter, want.BloomFilter)
		}
		if f.InMemory != want.InMemory {
			t.Errorf("family %s: in memory %v, want %v", want.Name, f.InMemory, want.InMemory)
		}
	}
	if !slices.EqualFunc(got.SplitKeys, spec.SplitKeys, bytes.Equal) {
		t.Errorf("DescribeTable split keys = %q, want %q", got.SplitKeys, spec.SplitKeys)
	}
}

func testListSorted(t *testing.T, e *env) {
	base := e.tableName()
	// Created out of order on purpose.
	names := []string{base + "_c", base + "_a", base + "_B", base + "_b"}
	for _, n := range names {
		if err := e.st.CreateTable(e.ctx, store.TableSpec{Name: n, Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
			t.Fatalf("CreateTable(%s): %v", n, err)
		}
		e.dropAtEnd(n)
	}
	list, err := e.st.ListTables(e.ctx)
	if err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if !slices.IsSorted(list) {
		t.Errorf("ListTables is not sorted: %q", list)
	}
	var ours []string
	for _, n := range list {
		if slices.Contains(names, n) {
			ours = append(ours, n)
		}
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(ours, want) {
		t.Errorf("ListTables holds our tables as %q, want %q", ours, want)
	}
}

func testDropTable(t *testing.T, e *env) {
	name := e.simple(1, "f")
	e.put(name, "r", "f", "q", 10, "v")
	if err := e.st.DropTable(e.ctx, name); err != nil {
		t.Fatalf("DropTable(%s): %v", name, err)
	}
	if _, err := e.st.DescribeTable(e.ctx, name); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("DescribeTable after drop: err = %v, want ErrTableNotFound", err)
	}
	list, err := e.st.ListTables(e.ctx)
	if err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if slices.Contains(list, name) {
		t.Errorf("ListTables still lists dropped table %s", name)
	}
	if err := e.st.DropTable(e.ctx, name); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("second DropTable: err = %v, want ErrTableNotFound", err)
	}
	// A table created again under the same name starts empty.
	if err := e.st.CreateTable(e.ctx, store.TableSpec{Name: name, Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatalf("CreateTable(%s) again: %v", name, err)
	}
	if r := e.get(name, store.Get{Row: []byte("r")}); !r.Empty() {
		t.Errorf("recreated table holds data of the dropped one: %s", cellsString(r.Cells))
	}
}

func testCreateTwice(t *testing.T, e *env) {
	name := e.simple(1, "f")
	err := e.st.CreateTable(e.ctx, store.TableSpec{Name: name, Families: []store.FamilySpec{{Name: "g"}}})
	if !errors.Is(err, store.ErrTableExists) {
		t.Errorf("CreateTable of an existing table: err = %v, want ErrTableExists", err)
	}
	// The first table is untouched.
	spec, err := e.st.DescribeTable(e.ctx, name)
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if _, ok := spec.Family("f"); !ok || len(spec.Families) != 1 {
		t.Errorf("failed CreateTable changed the table: %+v", spec)
	}
}

func testMissingTable(t *testing.T, e *env) {
	name := e.tableName() // never created
	row := []byte("r")
	put := store.RowMutation{Row: row, Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}}
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("%s on a missing table: err = %v, want ErrTableNotFound", op, err)
		}
	}
	_, err := e.st.DescribeTable(e.ctx, name)
	check("DescribeTable", err)
	check("DropTable", e.st.DropTable(e.ctx, name))
	_, err = e.st.Regions(e.ctx, name)
	check("Regions", err)
	check("MajorCompact", e.st.MajorCompact(e.ctx, name))
	_, err = e.st.Get(e.ctx, name, store.Get{Row: row})
	check("Get", err)
	_, err = store.GetMany(e.ctx, e.st, name, []store.Get{{Row: row}, {Row: []byte("s")}})
	check("GetMany", err)
	_, err = scanAll(e.ctx, e.st, name, store.Scan{})
	check("Scan", err)
	check("Mutate", e.st.Mutate(e.ctx, name, put))
	_, err = e.st.Batch(e.ctx, name, []store.RowMutation{put})
	check("Batch", err)
	_, err = e.st.Increment(e.ctx, name, store.Increment{Row: row, Columns: []store.IncrementColumn{{Family: "f", Qualifier: []byte("c"), Delta: 1}}})
	check("Increment", err)
	_, err = e.st.CheckAndMutate(e.ctx, name, store.Condition{Family: "f", Qualifier: []byte("q"), Absent: true}, put)
	check("CheckAndMutate", err)
}

func testUnknownFamily(t *testing.T, e *env) {
	name := e.simple(1, "f")
	row := []byte("r")
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrFamilyNotFound) {
			t.Errorf("%s naming an unknown family: err = %v, want ErrFamilyNotFound", op, err)
		}
	}
	// One good family and one unknown: the whole row mutation fails and
	// none of it lands.
	err := e.st.Mutate(e.ctx, name, store.RowMutation{Row: row, Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 5, Value: []byte("v")},
		{Kind: store.Put, Family: "nope", Qualifier: []byte("q"), Timestamp: 5, Value: []byte("v")},
	}})
	check("Mutate", err)
	if r := e.get(name, store.Get{Row: row}); !r.Empty() {
		t.Errorf("a refused row mutation partly landed: %s", cellsString(r.Cells))
	}
	_, err = e.st.Get(e.ctx, name, store.Get{Row: row, Columns: []store.Column{fam("nope")}})
	check("Get", err)
	// One good Get and one naming the unknown family: the call fails whole.
	_, err = store.GetMany(e.ctx, e.st, name, []store.Get{{Row: row}, {Row: row, Columns: []store.Column{fam("nope")}}})
	check("GetMany", err)
	_, err = scanAll(e.ctx, e.st, name, store.Scan{Columns: []store.Column{col("nope", "q")}})
	check("Scan", err)
	_, err = e.st.Increment(e.ctx, name, store.Increment{Row: row, Columns: []store.IncrementColumn{{Family: "nope", Qualifier: []byte("c"), Delta: 1}}})
	check("Increment", err)
}
