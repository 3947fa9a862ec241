package store

import "testing"

// A clone shares no bytes with the row it copies: a scanner reuses its
// buffers on the next call.
func TestRowCloneIsDeep(t *testing.T) {
	key, q, v := []byte("row"), []byte("q"), []byte("value")
	r := Row{Key: key, Cells: []Cell{{Row: key, Family: "f", Qualifier: q, Timestamp: 3, Value: v}}}
	c := r.Clone()
	for _, b := range [][]byte{key, q, v} {
		for i := range b {
			b[i] = 'x'
		}
	}
	r.Cells[0].Timestamp = 9
	got := c.Cells[0]
	if string(c.Key) != "row" || string(got.Row) != "row" || string(got.Qualifier) != "q" || string(got.Value) != "value" || got.Timestamp != 3 || got.Family != "f" {
		t.Fatalf("clone changed with its original: %+v", c)
	}
	if e := (Row{}).Clone(); !e.Empty() {
		t.Fatalf("clone of an empty row: %+v", e)
	}
}
