package schema

import (
	"time"

	"github.com/denorm/denorm/store"
)

// families reads the families section, or, when there is none, gives the
// table the families its cells use (or one family "d").
func (d *decoder) families(td *tableDecl, used []string) {
	t := td.t
	n, ok := td.nodes["families"]
	if !ok {
		if len(used) == 0 {
			used = []string{"d"}
		}
		for _, name := range used {
			t.Families = append(t.Families, &Family{FamilySpec: store.FamilySpec{Name: name}, Line: t.Line, Lines: Lines{}})
		}
		return
	}
	at := join(td.path, "families")
	entries, _ := d.mapping(n, at)
	for _, e := range entries {
		fp := join(at, e.Key)
		if !isIdent(e.Key) {
			d.errAt(e.KeyN, fp, "%q is not a family name", e.Key)
			continue
		}
		f := &Family{FamilySpec: store.FamilySpec{Name: e.Key}, Line: e.KeyN.Line, Lines: Lines{}}
		attrs, _ := d.mapping(e.Value, fp, familyKeys...)
		for _, a := range attrs {
			f.Lines[a.Key] = a.KeyN.Line
			sp := join(fp, a.Key)
			switch a.Key {
			case "versions":
				if v, ok := d.integer(a.Value, sp, 1, 1<<31-1); ok {
					f.MaxVersions = int(v)
				}
			case "ttl":
				if v, ok := d.duration(a.Value, sp); ok {
					if v < time.Second || v%time.Second != 0 {
						d.errAt(resolve(a.Value), sp, "HBase keeps TTL in whole seconds; %v is not", v)
					}
					f.TTL = v
				}
			case "compression":
				f.Compression, _ = d.enumFold(a.Value, sp, compressions...)
			case "encoding":
				f.DataBlockEncoding, _ = d.enumFold(a.Value, sp, encodings...)
			case "blocksize":
				if v, ok := d.size(a.Value, sp); ok {
					if v < 1<<10 || v > 16<<20 {
						d.errAt(resolve(a.Value), sp, "block size %d is outside 1KiB..16MiB", v)
					}
					f.BlockSize = int(v)
				}
			case "bloom":
				f.BloomFilter, _ = d.enumFold(a.Value, sp, blooms...)
			case "in_memory":
				f.InMemory, _ = d.boolean(a.Value, sp)
			default:
				d.familyStorage(f, a, sp)
			}
		}
		d.checkFamily(f, fp)
		t.Families = append(t.Families, f)
	}
	if len(t.Families) == 0 {
		d.errAt(resolve(n), at, "table %q declares no families", t.Name)
	}
}
