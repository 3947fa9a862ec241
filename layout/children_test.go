package layout

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Two child lists in one primary row, one stored a cell per element and one
// a cell per element and field, in families that interleave their cells:
// ReadState gives each list back whole, however its cells are spread.
const twoListsSchema = `
name: lists
entities:
  box:
    key: id
    version: v
    fields:
      id: string
    children:
      parts:
        key: n
        max: 20
        fields:
          n: int32
          label: string
          weight: int64
      notes:
        key: at
        max: 10
        fields:
          at: int64
          text: string
tables:
  boxes:
    role: primary
    entity: box
    rowkey: [id]
    families:
      a: {}
      b: {}
    columns:
      "a:{n}:l": parts.label
      "b:{n}:w": parts.weight
      "a:{at}": notes
`

func TestReadStateTwoChildLists(t *testing.T) {
	p, err := schema.Parse("lists.yaml", []byte(twoListsSchema))
	if err != nil {
		t.Fatal(err)
	}
	ent, prim := p.Entity("box"), p.Primary("box")
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 300; i++ {
		st := map[string]any{"id": fmt.Sprintf("box-%d", i)}
		var parts, notes []map[string]any
		for k := 0; k < r.Intn(12); k++ {
			el := map[string]any{"n": int32(k*7 + 1)}
			if r.Intn(3) > 0 {
				el["label"] = fmt.Sprintf("l%d", r.Intn(100))
			}
			if r.Intn(3) > 0 {
				el["weight"] = int64(r.Intn(1000))
			}
			parts = append(parts, el)
		}
		for k := 0; k < r.Intn(6); k++ {
			notes = append(notes, map[string]any{"at": int64(100 + k), "text": fmt.Sprintf("t%d", k)})
		}
		if parts != nil {
			st["parts"] = parts
		}
		if notes != nil {
			st["notes"] = notes
		}
		d, err := Derive(p, ent, st)
		if err != nil {
			t.Fatalf("derive %v: %v", st, err)
		}
		row := primaryRow(d, 5)
		// A store returns a row's cells sorted by family and qualifier.
		slices.SortFunc(row.Cells, func(x, y store.Cell) int {
			if c := strings.Compare(x.Family, y.Family); c != 0 {
				return c
			}
			return bytes.Compare(x.Qualifier, y.Qualifier)
		})
		back, err := ReadState(p, ent, prim, row)
		if err != nil {
			t.Fatalf("read state of %v: %v", st, err)
		}
		// An element with no field but its key has no cell to come back
		// from when stored a field per cell.
		var want []map[string]any
		for _, el := range parts {
			if len(el) > 1 {
				want = append(want, el)
			}
		}
		for name, w := range map[string][]map[string]any{"parts": want, "notes": notes} {
			got, _ := back.Values[name].([]map[string]any)
			// Elements come back in the order of their first cells, which
			// for a list stored a field per cell need not be key order.
			key := ent.Child(name).Key
			slices.SortFunc(got, func(x, y map[string]any) int { return cmpKey(x[key], y[key]) })
			if len(got) != len(w) || (len(w) > 0 && !reflect.DeepEqual(got, w)) {
				t.Fatalf("state %v: %s read back as %v, want %v", st, name, got, w)
			}
		}
	}
}

func cmpKey(a, b any) int {
	switch x := a.(type) {
	case int32:
		return int(x - b.(int32))
	case int64:
		return int(x - b.(int64))
	}
	return 0
}
