package schema

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

func (d *decoder) columns(td *tableDecl, n *yaml.Node) []*Column {
	at := join(td.path, "columns")
	entries, _ := d.mapping(n, at)
	var out []*Column
	stored := map[string]int{}
	for _, e := range entries {
		cp := join(at, e.Key)
		fam, qual, ok := strings.Cut(e.Key, ":")
		if !ok || !isIdent(fam) {
			d.errAt(e.KeyN, cp, "%q is not family:qualifier", e.Key)
			continue
		}
		c := &Column{Family: fam, Qualifier: qual, Line: e.KeyN.Line}
		if qual != "" && qual[0] <= QualifierEscape {
			d.errAt(e.KeyN, cp, "qualifier %q starts with byte 0x%02x: qualifiers starting with 0x00 to 0x02 are the writer's own", qual, qual[0])
			continue
		}
		value, ok := d.str(e.Value, cp)
		if !ok {
			continue
		}
		if open := strings.IndexByte(qual, '{'); open >= 0 {
			end := strings.IndexByte(qual, '}')
			if end < open || strings.ContainsAny(qual[end+1:], "{}") {
				d.errAt(e.KeyN, cp, "qualifier %q: a template holds one {childKey}", qual)
				continue
			}
			c.Template, c.Prefix, c.Suffix = true, qual[:open], qual[end+1:]
			keyName := qual[open+1 : end]
			child, field, _ := strings.Cut(value, ".")
			ch := td.ent.Child(child)
			if ch == nil {
				d.errAt(e.KeyN, cp, "a template column holds a child list or a child's field; %q is neither", value)
				continue
			}
			if ch.Key != keyName {
				d.errAt(e.KeyN, cp, "qualifier %q: child list %q is keyed by {%s}", qual, child, ch.Key)
				continue
			}
			if td.t.Each == child {
				d.errAt(e.KeyN, cp, "the table has one row per %s element already; use a plain qualifier", child)
				continue
			}
			c.Child = child
			if field != "" {
				if ch.Field(field) == nil {
					d.errAt(e.KeyN, cp, "%q is not a field of child list %q", field, child)
					continue
				}
				c.Field = value
			}
		} else {
			if ch := td.ent.Child(value); ch != nil {
				d.errAt(e.KeyN, cp, "child list %q needs a template qualifier with its key, such as %q", value, fam+":{"+ch.Key+"}")
				continue
			}
			if d.field(td, value, e.KeyN.Line, cp) == nil {
				continue
			}
			c.Field = value
		}
		what := c.Field
		if what == "" {
			what = c.Child
		}
		if first, dup := stored[what]; dup {
			d.errAt(e.KeyN, cp, "%q is already stored on line %d", what, first)
			continue
		}
		stored[what] = c.Line
		out = append(out, c)
	}
	return out
}
