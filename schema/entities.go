package schema

import (
	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/rowkey"
)

var entityKeys = []string{"key", "version", "version_kind", "fields", "children", "references", "description"}

func (d *decoder) entities(p *Plan, n *yaml.Node) {
	entries, _ := d.mapping(n, "entities")
	for _, e := range entries {
		path := join("entities", e.Key)
		if !isIdent(e.Key) {
			d.errAt(e.KeyN, path, "%q is not a name", e.Key)
			continue
		}
		p.Entities = append(p.Entities, d.entity(e, path))
	}
	if len(p.Entities) == 0 {
		d.errAt(resolve(n), "entities", "the schema declares no entities")
	}
	// References name other entities, so they are checked once all are known.
	for _, ent := range p.Entities {
		d.checkReferences(p, ent)
	}
}

func (d *decoder) entity(e entry, path string) *Entity {
	ent := &Entity{Name: e.Key, Line: e.KeyN.Line, VersionKind: VersionEvent, Lines: Lines{}}
	entries, _ := d.mapping(e.Value, path, entityKeys...)
	byKey := map[string]entry{}
	for _, x := range entries {
		byKey[x.Key] = x
		ent.Lines[x.Key] = x.KeyN.Line
	}
	// Fields and children first: key and version refer to them.
	if x, ok := byKey["fields"]; ok {
		ent.Fields = d.fields(x.Value, join(path, "fields"), "")
	}
	if len(ent.Fields) == 0 {
		d.errLine(ent.Line, path, "entity %q declares no fields", ent.Name)
	}
	if x, ok := byKey["children"]; ok {
		d.children(ent, x.Value, join(path, "children"))
	}
	if x, ok := byKey["key"]; ok {
		d.entityKey(ent, x.Value, join(path, "key"))
	} else {
		d.errLine(ent.Line, path, "entity %q has no key", ent.Name)
	}
	if x, ok := byKey["version"]; ok {
		if v, ok := d.str(x.Value, join(path, "version")); ok {
			ent.Version = v
			if f := ent.Field(v); f != nil && f.Type != rowkey.Int64 && f.Type != rowkey.Timestamp {
				d.errAt(resolve(x.Value), join(path, "version"), "version field %q is %v; want int64 or timestamp", v, f.Type)
			}
		}
	}
	if x, ok := byKey["version_kind"]; ok {
		if v, ok := d.enum(x.Value, join(path, "version_kind"), string(VersionEvent), string(VersionEpochMillis)); ok {
			ent.VersionKind = VersionKind(v)
		}
	}
	if x, ok := byKey["description"]; ok {
		d.str(x.Value, join(path, "description"))
	}
	if x, ok := byKey["references"]; ok {
		d.references(ent, x.Value, join(path, "references"))
	}
	return ent
}

// fields reads `name: type` or `name: {type: t, size: n}` pairs.
func (d *decoder) fields(n *yaml.Node, path, child string) []*Field {
	entries, _ := d.mapping(n, path)
	var out []*Field
	for _, e := range entries {
		fp := join(path, e.Key)
		if !isIdent(e.Key) {
			d.errAt(e.KeyN, fp, "%q is not a field name", e.Key)
			continue
		}
		f := &Field{Name: e.Key, Path: e.Key, Child: child, Line: e.KeyN.Line}
		if child != "" {
			f.Path = child + "." + e.Key
		}
		v := resolve(e.Value)
		typeNode := v
		if v != nil && v.Kind == yaml.MappingNode {
			typeNode = nil
			attrs, _ := d.mapping(v, fp, "type", "size", "max_size")
			maxLine := 0
			for _, a := range attrs {
				switch a.Key {
				case "type":
					typeNode = a.Value
				case "size":
					if s, ok := d.size(a.Value, join(fp, "size")); ok {
						if s > MaxFieldSize {
							d.errAt(resolve(a.Value), join(fp, "size"), "size %d is over the limit of 1 GiB for one field", s)
						} else {
							f.Size = s
						}
					}
				case "max_size":
					if s, ok := d.size(a.Value, join(fp, "max_size")); ok {
						f.MaxSize, maxLine = s, a.KeyN.Line
					}
				}
			}
			if f.MaxSize > 0 && f.MaxSize < f.Size {
				d.errLine(maxLine, join(fp, "max_size"), "max_size %d is below the typical size %d", f.MaxSize, f.Size)
			}
			if typeNode == nil {
				d.errAt(v, fp, "field %q has no type", e.Key)
				continue
			}
		}
		name, ok := d.str(typeNode, fp)
		if !ok {
			continue
		}
		t, err := rowkey.ParseType(name)
		if err != nil {
			d.errAt(resolve(typeNode), fp, "%v", err)
			continue
		}
		f.Type = t
		out = append(out, f)
	}
	return out
}

func (d *decoder) children(ent *Entity, n *yaml.Node, path string) {
	entries, _ := d.mapping(n, path)
	for _, e := range entries {
		cp := join(path, e.Key)
		if !isIdent(e.Key) {
			d.errAt(e.KeyN, cp, "%q is not a name", e.Key)
			continue
		}
		if f := ent.Field(e.Key); f != nil {
			d.errAt(e.KeyN, cp, "child list %q has the name of field %q (line %d)", e.Key, f.Name, f.Line)
			continue
		}
		c := &Child{Name: e.Key, Line: e.KeyN.Line, Lines: Lines{}}
		attrs, _ := d.mapping(e.Value, cp, "key", "max", "typical", "fields")
		var keyNode *yaml.Node
		for _, a := range attrs {
			c.Lines[a.Key] = a.KeyN.Line
			switch a.Key {
			case "key":
				keyNode = a.Value
			case "max":
				if v, ok := d.integer(a.Value, join(cp, "max"), 1, MaxChildren); ok {
					c.Max = int(v)
				}
			case "typical":
				if v, ok := d.integer(a.Value, join(cp, "typical"), 0, MaxChildren); ok {
					c.Typical = int(v)
				}
			case "fields":
				c.Fields = d.fields(a.Value, join(cp, "fields"), c.Name)
			}
		}
		if _, ok := c.Lines["max"]; !ok {
			d.errLine(c.Line, cp, "child list %q has no max: an unbounded list makes an unbounded row", c.Name)
		}
		if c.Max > 0 && c.Typical > c.Max {
			d.errLine(c.Lines["typical"], join(cp, "typical"), "typical %d is above max %d", c.Typical, c.Max)
		}
		if len(c.Fields) == 0 {
			d.errLine(c.Line, cp, "child list %q declares no fields", c.Name)
		}
		if keyNode == nil {
			d.errLine(c.Line, cp, "child list %q has no key", c.Name)
		} else if k, ok := d.str(keyNode, join(cp, "key")); ok {
			if c.Field(k) == nil {
				d.errAt(resolve(keyNode), join(cp, "key"), "key %q is not a field of child list %q", k, c.Name)
			} else {
				c.Key = k
			}
		}
		ent.Children = append(ent.Children, c)
	}
}

func (d *decoder) entityKey(ent *Entity, n *yaml.Node, path string) {
	var names []string
	var lines []int
	if v := resolve(n); v != nil && v.Kind == yaml.SequenceNode {
		names, lines, _ = d.strList(v, path)
	} else if s, ok := d.str(n, path); ok {
		names, lines = []string{s}, []int{lineOf(n)}
	}
	if len(names) == 0 {
		d.errAt(resolve(n), path, "entity %q has an empty key", ent.Name)
		return
	}
	for i, k := range names {
		f := ent.Field(k)
		switch {
		case f == nil:
			d.errLine(lines[i], path, "key field %q is not a field of entity %q", k, ent.Name)
		case f.Child != "":
			d.errLine(lines[i], path, "key field %q belongs to child list %q; an entity key must be an entity field", k, f.Child)
		case contains(ent.Key, k):
			d.errLine(lines[i], path, "key field %q is listed twice", k)
		default:
			ent.Key = append(ent.Key, k)
		}
	}
}

func (d *decoder) references(ent *Entity, n *yaml.Node, path string) {
	entries, _ := d.mapping(n, path)
	for _, e := range entries {
		rp := join(path, e.Key)
		r := &Reference{Name: e.Key, Line: e.KeyN.Line, Lines: Lines{}}
		attrs, _ := d.mapping(e.Value, rp, "entity", "key", "copy")
		for _, a := range attrs {
			r.Lines[a.Key] = a.KeyN.Line
			switch a.Key {
			case "entity":
				r.Entity, _ = d.str(a.Value, join(rp, "entity"))
			case "key":
				r.Key, _ = d.str(a.Value, join(rp, "key"))
			case "copy":
				r.Copies = d.copies(a.Value, join(rp, "copy"))
			}
		}
		for _, c := range r.Copies {
			if c.Intent == IntentLive {
				r.Live = append(r.Live, c.From)
			}
		}
		if r.Entity == "" {
			d.errLine(r.Line, rp, "reference %q names no entity", r.Name)
		}
		if r.Key == "" {
			d.errLine(r.Line, rp, "reference %q names no key field", r.Name)
		}
		ent.References = append(ent.References, r)
	}
}

// copies reads `local.path: from` or `local.path: {from: f, intent: live}`.
func (d *decoder) copies(n *yaml.Node, path string) []*Copy {
	entries, _ := d.mapping(n, path)
	var out []*Copy
	for _, e := range entries {
		cp := join(path, e.Key)
		c := &Copy{Field: e.Key, Line: e.KeyN.Line}
		v := resolve(e.Value)
		if v != nil && v.Kind == yaml.MappingNode {
			attrs, _ := d.mapping(v, cp, "from", "intent")
			for _, a := range attrs {
				switch a.Key {
				case "from":
					c.From, _ = d.str(a.Value, join(cp, "from"))
				case "intent":
					if s, ok := d.enum(a.Value, join(cp, "intent"), string(IntentSnapshot), string(IntentLive)); ok {
						c.Intent = Intent(s)
					}
				}
			}
		} else {
			c.From, _ = d.str(v, cp)
		}
		if c.From == "" {
			d.errLine(c.Line, cp, "copy of %q names no source field (from)", c.Field)
			continue
		}
		out = append(out, c)
	}
	return out
}

func (d *decoder) checkReferences(p *Plan, ent *Entity) {
	copied := map[string]int{}
	for _, r := range ent.References {
		rp := join(join(join("entities", ent.Name), "references"), r.Name)
		if r.Entity == "" {
			continue
		}
		target := p.Entity(r.Entity)
		if target == nil {
			d.errLine(r.Lines["entity"], join(rp, "entity"), "unknown entity %q", r.Entity)
			continue
		}
		local := ent.Field(r.Key)
		switch {
		case local == nil:
			d.errLine(r.Lines["key"], join(rp, "key"), "%q is not a field of entity %q", r.Key, ent.Name)
		case len(target.Key) != 1:
			d.errLine(r.Lines["entity"], join(rp, "entity"), "entity %q has a composite key; a reference holds one field", target.Name)
		default:
			if tk := target.Field(target.Key[0]); tk != nil && tk.Type != local.Type {
				d.errLine(r.Lines["key"], join(rp, "key"), "%q is %v but the key of %q is %v", r.Key, local.Type, target.Name, tk.Type)
			}
		}
		for _, c := range r.Copies {
			cp := join(join(rp, "copy"), c.Field)
			lf := ent.Field(c.Field)
			if lf == nil {
				d.errLine(c.Line, cp, "%q is not a field of entity %q", c.Field, ent.Name)
				continue
			}
			if local != nil && lf.Child != local.Child {
				d.errLine(c.Line, cp, "%q and the reference key %q belong to different lists", c.Field, r.Key)
			}
			if first, dup := copied[c.Field]; dup {
				d.errLine(c.Line, cp, "%q is already copied (line %d)", c.Field, first)
				continue
			}
			copied[c.Field] = c.Line
			if contains(ent.Key, c.Field) {
				d.errLine(c.Line, cp, "%q is part of the entity key and cannot be a copy", c.Field)
			}
			tf := target.Field(c.From)
			if tf == nil {
				d.errLine(c.Line, cp, "%q is not a field of entity %q", c.From, target.Name)
				continue
			}
			if tf.Type != lf.Type {
				d.errLine(c.Line, cp, "%q is %v but %s.%s is %v", c.Field, lf.Type, target.Name, c.From, tf.Type)
			}
		}
	}
}
