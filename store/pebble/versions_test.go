package pebble

import (
	"context"
	"fmt"
	"testing"

	"github.com/denorm/denorm/store"
)

// TestOldVersionsSkipped: a read seeks past the versions of a column it may
// no longer return, and what it returns is what stepping over every key
// gives: the newest versions up to the cap, with delete markers among the
// old versions and columns whose qualifiers extend the skipped one (or hold
// zero bytes) still honoured.
func TestOldVersionsSkipped(t *testing.T) {
	st := openTest(t, Options{})
	ctx := context.Background()
	spec := store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f", MaxVersions: 200}}}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	quals := [][]byte{[]byte("q"), []byte("q\x00"), []byte("q\x00\x01"), []byte("qa"), []byte("r")}
	row := []byte("row")
	for ts := int64(1); ts <= 100; ts++ {
		var ms []store.Mutation
		for _, q := range quals {
			ms = append(ms, store.Mutation{Kind: store.Put, Family: "f", Qualifier: q, Timestamp: ts, Value: []byte(fmt.Sprintf("%s@%d", q, ts))})
		}
		if err := st.Mutate(ctx, "t", store.RowMutation{Row: row, Mutations: ms}); err != nil {
			t.Fatal(err)
		}
	}
	// A column marker deep among q's old versions, and one version delete
	// of "qa" below its newest three.
	if err := st.Mutate(ctx, "t", store.RowMutation{Row: row, Mutations: []store.Mutation{
		{Kind: store.DeleteColumn, Family: "f", Qualifier: quals[0], Timestamp: 40},
		{Kind: store.DeleteVersion, Family: "f", Qualifier: []byte("qa"), Timestamp: 97},
	}}); err != nil {
		t.Fatal(err)
	}
	// What stepping over every key gives, worked out from the writes.
	model := func(versions int, tr store.TimeRange) map[string][]int64 {
		out := map[string][]int64{}
		for _, q := range quals {
			for ts := int64(100); ts >= 1 && len(out[string(q)]) < versions; ts-- {
				if string(q) == "q" && ts <= 40 || string(q) == "qa" && ts == 97 || !tr.Contains(ts) {
					continue
				}
				out[string(q)] = append(out[string(q)], ts)
			}
		}
		return out
	}
	for _, c := range []struct {
		versions int
		tr       store.TimeRange
	}{{1, store.TimeRange{}}, {3, store.TimeRange{}}, {10, store.TimeRange{}}, {1, store.TimeRange{Max: 98}},
		{2, store.TimeRange{Max: 42}}, {1, store.TimeRange{Max: 40}}, {5, store.TimeRange{Min: 30, Max: 60}}} {
		c := struct {
			versions int
			tr       store.TimeRange
			want     map[string][]int64
		}{c.versions, c.tr, model(c.versions, c.tr)}
		row, err := st.Get(ctx, "t", store.Get{Row: row, MaxVersions: c.versions, TimeRange: c.tr})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]int64{}
		for _, cell := range row.Cells {
			if want := fmt.Sprintf("%s@%d", cell.Qualifier, cell.Timestamp); string(cell.Value) != want {
				t.Errorf("cell value %q, want %q", cell.Value, want)
			}
			got[string(cell.Qualifier)] = append(got[string(cell.Qualifier)], cell.Timestamp)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("versions %d, range %v: got %v, want %v", c.versions, c.tr, got, c.want)
		}
	}
}
