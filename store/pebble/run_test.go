package pebble

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// TestPlainColumnRuns checks the read's short way through runs of plain
// columns (read.go) against its general way. A read naming every column
// one by one never takes the short way, and the random model test of the
// conformance suite holds the general way to HBase's semantics; a read of
// whole families must return the same cells. The rows are wide, with plain
// qualifiers of different lengths, an empty and an escaped one, several
// versions, every kind of delete marker, a family with a TTL and one with
// more versions, so that runs start, stop and resume at every kind of key.
// Rows of several lengths (one with a zero byte), a family name longer
// than a word and qualifiers longer than a word (one with a zero byte)
// take the cursor's and the run's other ways; reverse scans and reads of
// a few whole families are held to the same cells.
func TestPlainColumnRuns(t *testing.T) {
	ctx := context.Background()
	const now = 1_000_000
	st, err := Open(ctx, t.TempDir(), Options{Clock: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fams := []store.FamilySpec{
		{Name: "a", MaxVersions: 3},
		{Name: "b"},
		{Name: "c", TTL: 10 * time.Second, MaxVersions: 2},
		{Name: "d", MaxVersions: 2, TTL: 10 * time.Second, MinVersions: 1},
		{Name: "familywithalongname"},
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: fams}); err != nil {
		t.Fatal(err)
	}
	quals := [][]byte{{}, []byte("q"), []byte("q0"), []byte("q1"), []byte("q10"), []byte("q2"), []byte("q3"),
		[]byte("q4"), []byte("q5"), []byte("r\x00"), []byte("s"), []byte("t"), []byte("u"),
		[]byte("qualifier-long-a"), []byte("qualifier-long-b"), []byte("qualifier-longer"), []byte("qualifier\x00long")}
	// Timestamps around the TTL's edge: now-10s is the oldest kept.
	stamps := []int64{1, 2, 3, now - 20_000, now - 10_000, now - 5_000, now - 1}
	rng := rand.New(rand.NewPCG(17, 23))
	var rows [][]byte
	for r := 0; r < 40; r++ {
		row := []byte(fmt.Sprintf("row%02d", r))
		switch r % 7 {
		case 1:
			row = []byte(fmt.Sprintf("r\x00w%02d", r))
		case 2:
			row = []byte(fmt.Sprintf("x%d", r))
		case 3:
			row = []byte(fmt.Sprintf("a-much-longer-row-key-%02d", r))
		}
		rows = append(rows, row)
		var ms []store.Mutation
		for range 10 + rng.IntN(80) {
			f := fams[rng.IntN(len(fams))].Name
			m := store.Mutation{Kind: store.Put, Family: f, Qualifier: quals[rng.IntN(len(quals))],
				Timestamp: stamps[rng.IntN(len(stamps))], Value: []byte(fmt.Sprintf("v%d", rng.IntN(1000)))}
			// Mostly puts, so that long runs of plain columns form.
			switch x := rng.IntN(40); {
			case x == 0:
				m = store.Mutation{Kind: store.DeleteFamily, Family: f, Timestamp: m.Timestamp}
			case x < 3:
				m.Kind, m.Value = store.DeleteColumn, nil
			case x < 6:
				m.Kind, m.Value = store.DeleteVersion, nil
			}
			ms = append(ms, m)
		}
		if err := st.Mutate(ctx, "t", store.RowMutation{Row: row, Mutations: ms}); err != nil {
			t.Fatal(err)
		}
		if r == 20 {
			if err := st.db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var every []store.Column
	for _, f := range fams {
		for _, q := range quals {
			every = append(every, store.Column{Family: f.Name, Qualifier: q})
		}
	}
	// Whole families a, b and the long one, against their columns one by
	// one.
	some := []store.Column{{Family: "a"}, {Family: "b"}, {Family: "familywithalongname"}}
	var someEvery []store.Column
	for _, c := range every {
		if c.Family == "a" || c.Family == "b" || c.Family == "familywithalongname" {
			someEvery = append(someEvery, c)
		}
	}
	scan := func(sc store.Scan) map[string][]store.Cell {
		t.Helper()
		s, err := st.Scan(ctx, "t", sc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		scanned := map[string][]store.Cell{}
		for s.Next(ctx) {
			// A scanned row is valid until the next Next: keep a copy.
			r := s.Row()
			for _, c := range r.Cells {
				c.Row, c.Qualifier, c.Value = bytes.Clone(c.Row), bytes.Clone(c.Qualifier), bytes.Clone(c.Value)
				scanned[string(r.Key)] = append(scanned[string(r.Key)], c)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		return scanned
	}
	ranges := []store.TimeRange{{}, {Min: 2}, {Min: 2, Max: now - 5_000}, {Min: now - 10_000}, {Max: 3}}
	for _, versions := range []int{1, 2, 5} {
		for _, tr := range ranges {
			scanned := scan(store.Scan{MaxVersions: versions, TimeRange: tr})
			reversed := scan(store.Scan{MaxVersions: versions, TimeRange: tr, Reverse: true})
			scannedSome := scan(store.Scan{Columns: some, MaxVersions: versions, TimeRange: tr})
			for _, row := range rows {
				want, err := st.Get(ctx, "t", store.Get{Row: row, Columns: every, MaxVersions: versions, TimeRange: tr})
				if err != nil {
					t.Fatal(err)
				}
				got, err := st.Get(ctx, "t", store.Get{Row: row, MaxVersions: versions, TimeRange: tr})
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("row %s versions %d time range %+v", row, versions, tr)
				if !reflect.DeepEqual(got.Cells, want.Cells) {
					t.Fatalf("%s: Get of whole families\n got  %v\n want %v", what, got.Cells, want.Cells)
				}
				if s := scanned[string(row)]; len(s) > 0 || len(want.Cells) > 0 {
					if !reflect.DeepEqual(s, want.Cells) {
						t.Fatalf("%s: Scan\n got  %v\n want %v", what, s, want.Cells)
					}
				}
				if s := reversed[string(row)]; len(s) > 0 || len(want.Cells) > 0 {
					if !reflect.DeepEqual(s, want.Cells) {
						t.Fatalf("%s: reverse Scan\n got  %v\n want %v", what, s, want.Cells)
					}
				}
				wantSome, err := st.Get(ctx, "t", store.Get{Row: row, Columns: someEvery, MaxVersions: versions, TimeRange: tr})
				if err != nil {
					t.Fatal(err)
				}
				gotSome, err := st.Get(ctx, "t", store.Get{Row: row, Columns: some, MaxVersions: versions, TimeRange: tr})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gotSome.Cells, wantSome.Cells) {
					t.Fatalf("%s: Get of three whole families\n got  %v\n want %v", what, gotSome.Cells, wantSome.Cells)
				}
				if s := scannedSome[string(row)]; len(s) > 0 || len(wantSome.Cells) > 0 {
					if !reflect.DeepEqual(s, wantSome.Cells) {
						t.Fatalf("%s: Scan of three whole families\n got  %v\n want %v", what, s, wantSome.Cells)
					}
				}
			}
		}
	}
}
