package schema

// checkUnique requires the entity key inside a copy's row key: without it
// two entities with the same indexed value would overwrite one row.
func (d *decoder) checkUnique(td *tableDecl, what string) {
	t := td.t
	if t.Key == nil {
		return
	}
	for _, k := range td.ent.Key {
		if !t.Key.Recoverable(k) {
			d.errLine(t.Lines["rowkey"], join(td.path, "rowkey"), "the %s key does not contain the entity key %q, so it cannot be unique: two %ss would share one row", what, k, td.ent.Name)
		}
	}
}

func (d *decoder) checkPrimary(td *tableDecl) {
	t, ent := td.t, td.ent
	if t.Key == nil {
		return
	}
	d.checkUnique(td, "primary")
	stored := map[string]bool{}
	for _, c := range t.Columns {
		if c.Field != "" {
			stored[c.Field] = true
		} else {
			for _, f := range ent.Child(c.Child).Fields {
				stored[f.Path] = true
			}
		}
		if c.Template {
			stored[c.Child+"."+ent.Child(c.Child).Key] = true
		}
	}
	for _, f := range ent.Fields {
		if !stored[f.Path] && !t.Key.Recoverable(f.Path) {
			d.errLine(f.Line, join(td.path, "columns"), "field %q of entity %q is stored nowhere in primary table %q: map it to a column or put it in the row key", f.Path, ent.Name, t.Name)
		}
	}
	for _, c := range ent.Children {
		for _, f := range c.Fields {
			if !stored[f.Path] {
				d.errLine(f.Line, join(td.path, "columns"), "field %q of entity %q is stored nowhere in primary table %q: map the list to a template column such as \"i:{%s}\"", f.Path, ent.Name, t.Name, c.Key)
				break
			}
		}
	}
}

func (d *decoder) checkIndex(td *tableDecl) {
	t := td.t
	d.checkUnique(td, "index")
	n, ok := td.nodes["covering"]
	if !ok {
		if len(t.Columns) > 0 {
			d.errLine(t.Lines["columns"], join(td.path, "columns"), "an index without covering is thin and stores no columns; list the copied fields in covering")
		}
		return
	}
	fields, lines, _ := d.strList(n, join(td.path, "covering"))
	for i, f := range fields {
		at := index(join(td.path, "covering"), i)
		if d.field(td, f, lines[i], at) == nil {
			continue
		}
		if contains(t.Covering, f) {
			d.errLine(lines[i], at, "%q is listed twice", f)
			continue
		}
		t.Covering = append(t.Covering, f)
	}
	if len(t.Covering) == 0 {
		if len(t.Columns) > 0 {
			d.errLine(t.Lines["columns"], join(td.path, "columns"), "a thin index (empty covering) stores no columns")
		}
		return
	}
	if _, ok := td.nodes["columns"]; !ok && len(t.Families) > 0 {
		// Without a mapping each copied field gets a column named after it.
		for i, f := range t.Covering {
			t.Columns = append(t.Columns, &Column{Family: t.Families[0].Name, Qualifier: f, Field: f, Line: lines[i]})
		}
		return
	}
	for _, c := range t.Columns {
		if c.Field != "" && !contains(t.Covering, c.Field) {
			d.errLine(c.Line, join(join(td.path, "columns"), c.Name()), "%q is not in covering", c.Field)
		}
	}
	for i, f := range t.Covering {
		if t.ColumnFor(f) == nil && (t.Key == nil || !t.Key.Recoverable(f)) {
			d.errLine(lines[i], index(join(td.path, "covering"), i), "covered field %q has no column", f)
		}
	}
}

func (d *decoder) lookupReference(td *tableDecl) {
	t := td.t
	n, ok := td.nodes["reference"]
	if !ok {
		d.errLine(t.Line, td.path, "a lookup table names the reference it serves (reference: ...)")
		return
	}
	name, ok := d.str(n, join(td.path, "reference"))
	if !ok {
		return
	}
	var ref *Reference
	for _, r := range td.ent.References {
		if r.Name == name {
			ref = r
		}
	}
	if ref == nil {
		d.errAt(resolve(n), join(td.path, "reference"), "entity %q has no reference %q", td.ent.Name, name)
		return
	}
	t.Reference = name
	f := td.ent.Field(ref.Key)
	if f == nil || f.Child == "" {
		return
	}
	if t.Each == "" {
		t.Each = f.Child // one row per referencing element
	}
}

// checkLookupKey requires the key to start with the reference key (after
// any salt), since refreshing a live copy scans by it.
func (d *decoder) checkLookupKey(td *tableDecl) {
	t := td.t
	if t.Key == nil || t.Reference == "" {
		return
	}
	var ref *Reference
	for _, r := range td.ent.References {
		if r.Name == t.Reference {
			ref = r
		}
	}
	if ref == nil {
		return
	}
	if b := t.Key.BindFields([]string{ref.Key}); b.Parts == 0 {
		d.errLine(t.Lines["rowkey"], join(td.path, "rowkey"), "a lookup key must start with the reference key %q, the value a refresh scans by", ref.Key)
	}
}

// checkLocatorKey requires a locator's row key to be built from the entity
// key alone: the writer must find the row before it knows anything else.
func (d *decoder) checkLocatorKey(td *tableDecl) {
	t := td.t
	if t.Key == nil {
		return
	}
	d.checkUnique(td, "locator")
	for _, f := range t.Key.Fields() {
		if !contains(td.ent.Key, f) {
			d.errLine(t.Lines["rowkey"], join(td.path, "rowkey"), "a locator key is built from the entity key %v only; %q is not part of it", td.ent.Key, f)
		}
	}
	// A listing keeps the version that placed the entity in its row, which
	// updates in place do not renew: a TTL would expire it under a living
	// entity, and the writer takes an empty locator row for an entity never
	// written (docs/writer.md).
	for _, f := range t.Families {
		if f.TTL > 0 {
			d.errLine(f.Lines["ttl"], join(join(join(td.path, "families"), f.Name), "ttl"), "a locator must not expire: the writer reads no primary row of an entity whose locator row is empty, and takes it for new")
		}
	}
}
