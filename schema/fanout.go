package schema

import "strings"

// fanoutSource reads `fanout: {reference: R, list: L}`: R is a reference
// of the table's entity, L a child list of the entity R points at. Each
// entity event is copied into one row per element of that list.
func (d *decoder) fanoutSource(p *Plan, td *tableDecl) {
	t := td.t
	n, ok := td.nodes["fanout"]
	at := join(td.path, "fanout")
	if !ok {
		d.errLine(t.Line, td.path, "a fanout table says where its copies go (fanout: {reference: ..., list: ...})")
		return
	}
	fo := &Fanout{Line: t.Lines["fanout"]}
	attrs, _ := d.mapping(n, at, "reference", "list")
	for _, a := range attrs {
		switch a.Key {
		case "reference":
			fo.Reference, _ = d.str(a.Value, join(at, a.Key))
		case "list":
			fo.List, _ = d.str(a.Value, join(at, a.Key))
		}
	}
	if fo.Reference == "" || fo.List == "" {
		d.errLine(fo.Line, at, "fanout names both the reference and the list")
		return
	}
	var ref *Reference
	for _, r := range td.ent.References {
		if r.Name == fo.Reference {
			ref = r
		}
	}
	if ref == nil {
		d.errLine(fo.Line, join(at, "reference"), "entity %q has no reference %q", td.ent.Name, fo.Reference)
		return
	}
	target := p.Entity(ref.Entity)
	if target == nil {
		return // the reference's own error says why
	}
	list := target.Child(fo.List)
	if list == nil {
		d.errLine(fo.Line, join(at, "list"), "entity %q has no child list %q", target.Name, fo.List)
		return
	}
	if td.ent.Child(fo.List) != nil {
		d.errLine(fo.Line, join(at, "list"), "entity %q has a child list %q of its own; the fanout list's fields would be ambiguous", td.ent.Name, fo.List)
		return
	}
	fo.Entity, fo.Max, fo.Typical = target.Name, list.Max, list.Typical
	if fo.Typical == 0 {
		fo.Typical = list.Max
	}
	t.Fanout, td.fanList = fo, list
}

// fanoutField resolves "followers.followerId" in a fanout table: a field
// of the target list, which the row key may read.
func (td *tableDecl) fanoutField(path string) *Field {
	if td.fanList == nil {
		return nil
	}
	list, name, ok := strings.Cut(path, ".")
	if !ok || list != td.fanList.Name {
		return nil
	}
	return td.fanList.Field(name)
}

// checkFanoutKey requires an element field of the list in the key:
// without one, every element's copy is the same row.
func (d *decoder) checkFanoutKey(td *tableDecl) {
	t := td.t
	if t.Key == nil || td.fanList == nil {
		return
	}
	for _, f := range t.Key.Fields() {
		if td.fanoutField(f) != nil {
			return
		}
	}
	d.errLine(t.Lines["rowkey"], join(td.path, "rowkey"), "a fanout key needs a field of list %q (such as %s.%s): otherwise every element's copy is one row", td.fanList.Name, td.fanList.Name, td.fanList.Key)
}

// fanoutList is the list a fanout table copies into, or nil.
func fanoutList(p *Plan, t *Table) *Child {
	if t.Fanout == nil {
		return nil
	}
	if e := p.Entity(t.Fanout.Entity); e != nil {
		return e.Child(t.Fanout.List)
	}
	return nil
}
