package pebble

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// randomPart draws a short byte string heavy in the bytes the escaping
// treats specially (0x00, 0x01, 0x02, 0xFF).
func randomPart(r *rand.Rand, maxLen int) []byte {
	b := make([]byte, r.Intn(maxLen+1))
	for i := range b {
		switch r.Intn(3) {
		case 0:
			b[i] = []byte{0x00, 0x01, 0x02, 0xFF}[r.Intn(4)]
		default:
			b[i] = byte(r.Intn(256))
		}
	}
	return b
}

// Split's contract, checked on random cell keys: the prefix of a cell key
// is its row's prefix; bytewise order is the order of prefixes, then of
// suffixes; a bare prefix sorts before every key of its row; and the
// successor of a row prefix sorts after every key of the row and at or
// below every greater row prefix.
func TestRowComparerSplit(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	type key struct{ k, prefix []byte }
	var keys []key
	for i := 0; i < 600; i++ {
		id := uint64(r.Intn(3)) + []uint64{0, 1 << 8, 1 << 40}[r.Intn(3)]
		row := randomPart(r, 5)
		if len(row) == 0 {
			row = []byte{0}
		}
		k := appendCellKey(nil, id, row, string(randomPart(r, 3)), randomPart(r, 4), r.Int63n(10)-2, []byte{typePut, typeDeleteColumn, typeDeleteFamily}[r.Intn(3)])
		keys = append(keys, key{k, appendRowPrefix(nil, id, row)})
	}
	for _, a := range keys {
		if n := rowPrefixLen(a.k); n != len(a.prefix) || !bytes.Equal(a.k[:n], a.prefix) {
			t.Fatalf("Split(%x) = %d, want the row prefix %x", a.k, n, a.prefix)
		}
		if rowPrefixLen(a.prefix) != len(a.prefix) {
			t.Fatalf("a row prefix %x splits inside itself", a.prefix)
		}
		if bytes.Compare(a.prefix, a.k) >= 0 {
			t.Fatalf("prefix %x does not sort before its key %x", a.prefix, a.k)
		}
		succ := rowSuccessor(nil, a.prefix)
		if rowPrefixLen(succ) != len(succ) || bytes.Compare(a.prefix, succ) >= 0 {
			t.Fatalf("successor %x of %x is not a greater prefix", succ, a.prefix)
		}
		for _, b := range keys {
			c := sign(bytes.Compare(a.k, b.k))
			if pc := bytes.Compare(a.prefix, b.prefix); pc != 0 && c != pc {
				t.Fatalf("keys %x, %x compare %d but their prefixes %d", a.k, b.k, c, pc)
			}
			if bytes.Equal(a.prefix, b.prefix) {
				if sc := sign(bytes.Compare(a.k[len(a.prefix):], b.k[len(b.prefix):])); sc != c {
					t.Fatalf("keys %x, %x of one row compare %d but their suffixes %d", a.k, b.k, c, sc)
				}
				if bytes.Compare(b.k, succ) >= 0 {
					t.Fatalf("key %x of row %x sorts at or after the successor %x", b.k, a.prefix, succ)
				}
			} else if bytes.Compare(b.prefix, a.prefix) > 0 && bytes.Compare(b.prefix, succ) < 0 {
				t.Fatalf("row prefix %x lies between %x and its successor %x", b.prefix, a.prefix, succ)
			}
		}
	}
	// Keys of the other spaces and table bounds are whole prefixes.
	for _, k := range [][]byte{seqKey, metaKey("orders"), appendTablePrefix(nil, 7), {spaceData}} {
		if rowPrefixLen(k) != len(k) {
			t.Fatalf("Split(%x) = %d, want the whole key", k, rowPrefixLen(k))
		}
	}
}

// A new store's reads skip the sstables whose filters lack the row: after a
// flush, Gets and a GetMany of rows that do not exist are answered by the
// filters (Pebble counts each as a filter hit) and rows that do exist read
// back whole.
func TestRowFiltersAnswerMissingRows(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, Options{})
	if !st.filters {
		t.Fatal("a new store was made without row filters")
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}}); err != nil {
		t.Fatal(err)
	}
	value := benchValue(1)
	for i := 0; i < 500; i += 2 { // the even rows
		if err := st.Mutate(ctx, "t", benchMutation(i, value)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.db.Flush(); err != nil {
		t.Fatal(err)
	}
	before := st.db.Metrics().Filter.Hits
	var gets []store.Get
	for i := 1; i < 500; i += 2 {
		gets = append(gets, store.Get{Row: benchRow(i)})
		if r, err := st.Get(ctx, "t", store.Get{Row: benchRow(i)}); err != nil || !r.Empty() {
			t.Fatalf("Get of missing row %d: %v, %d cells", i, err, len(r.Cells))
		}
	}
	rows, err := st.GetMany(ctx, "t", gets)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if !r.Empty() {
			t.Fatalf("GetMany: missing row %d has %d cells", 2*i+1, len(r.Cells))
		}
	}
	// About 1% of filter probes are false positives.
	if hits := st.db.Metrics().Filter.Hits - before; hits < int64(2*len(gets))*9/10 {
		t.Errorf("%d filter hits for %d reads of missing rows; want nearly all", hits, 2*len(gets))
	}
	gets = gets[:0]
	for i := 0; i < 500; i += 2 {
		gets = append(gets, store.Get{Row: benchRow(i)})
	}
	rows, err = st.GetMany(ctx, "t", gets)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		want, err := st.Get(ctx, "t", gets[i])
		if err != nil || r.Empty() || fmt.Sprint(r) != fmt.Sprint(want) {
			t.Fatalf("row %d: GetMany %v, Get %v (%v)", 2*i, r, want, err)
		}
	}
}

// A store made before row filters (with Pebble's default comparer) still
// opens, and reads it without them.
func TestStoreWithoutRowFiltersOpens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := pdb.Open(dir, &pdb.Options{Logger: quietLogger{pdb.DefaultLogger}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.filters {
		t.Error("a store made with the default comparer reads as having row filters")
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Mutate(ctx, "t", benchMutation(3, benchValue(1))); err != nil {
		t.Fatal(err)
	}
	if err := st.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Get(ctx, "t", store.Get{Row: benchRow(3)}); err != nil || r.Empty() {
		t.Fatalf("Get: %v, empty %v", err, r.Empty())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// And a store with row filters opens again with them.
	dir2 := t.TempDir()
	st2, err := Open(ctx, dir2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st2.Close()
	if st3, err := Open(ctx, dir2, Options{}); err != nil || !st3.filters {
		t.Fatalf("reopened store: %v, filters %v", err, err == nil && st3.filters)
	} else {
		st3.Close()
	}
}

// rowPrefixLen against a byte-at-a-time reading of the same rule, on cell
// keys cut at every length: a cut may end inside an escape (a lone 0x00),
// in the table id, or just after a terminator.
func TestRowPrefixLenCuts(t *testing.T) {
	ref := func(k []byte) int {
		if len(k) <= tablePfx || k[0] != spaceData {
			return len(k)
		}
		for i := tablePfx; i+1 < len(k); i++ {
			if k[i] == escByte {
				if k[i+1] == escEnd {
					return i + 2
				}
				i++
			}
		}
		return len(k)
	}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 300; i++ {
		row := randomPart(r, 6)
		k := appendCellKey(nil, uint64(r.Intn(1<<16)), row, string(randomPart(r, 3)), randomPart(r, 4), r.Int63n(10)-2, typePut)
		for n := 0; n <= len(k); n++ {
			if got, want := rowPrefixLen(k[:n]), ref(k[:n]); got != want {
				t.Fatalf("rowPrefixLen(%x) = %d, want %d", k[:n], got, want)
			}
		}
	}
}
