package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// FuzzDecodeRow: whatever bytes a store hands back, reading them by the
// schema never panics and always gives JSON and text.
func FuzzDecodeRow(f *testing.F) {
	plan, err := schema.Load(filepath.Join("..", "..", "examples", "orders.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	kinds, err := schema.Load(filepath.Join("testdata", "key_kinds.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	var decs []*rowDecoder
	for _, p := range []*schema.Plan{plan, kinds} {
		for _, t := range p.Tables {
			d, err := newRowDecoder(p, t.Name)
			if err != nil {
				f.Fatal(err)
			}
			decs = append(decs, d)
		}
	}
	f.Add(uint8(0), []byte("c1\x00\x01\x7f\xff\xfe_\x0b8\xbc;o1\x00\x01"), "i", []byte("\x80\x00\x00\x01"), []byte("\x1f\x00\x00\x00\x01\x02s1"))
	f.Add(uint8(0), []byte("c1"), "d", []byte("\x01product\x00sku1\x00\x01\x00name"), []byte("Anvil"))
	f.Add(uint8(3), []byte{0, 0x80, 0, 0x50, 0xf7, 's', 0, 1, 2}, "c", []byte("u\x00o1\x00\x01"), []byte{0, 0, 0, 0, 0, 0, 0, 2})
	f.Add(uint8(1), []byte{3, 'O', 0, 1}, "d", []byte("r"), []byte("c1\x00\x01"))
	f.Fuzz(func(t *testing.T, which uint8, key []byte, family string, q, v []byte) {
		d := decs[int(which)%len(decs)]
		row := store.Row{Key: key, Cells: []store.Cell{{Family: family, Qualifier: q, Value: v, Timestamp: 1}}}
		k := d.key(row.Key)
		_ = k.text()
		c := d.cell(row.Cells[0])
		_ = c.label() + c.text()
		if _, err := json.Marshal(toJSONRow(row, d)); err != nil {
			t.Fatalf("%s: row does not marshal: %v", d.t.Name, err)
		}
	})
}
