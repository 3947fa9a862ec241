package schema

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/store"
)

var tableKeys = []string{"role", "entity", "each", "rowkey", "families", "columns", "covering",
	"buckets", "add", "mode", "reference", "when", "presplit", "durability", "regenerable", "description"}

// keys only some roles accept
var roleOnly = map[string]Role{"covering": RoleIndex, "buckets": RoleCounter, "add": RoleCounter, "mode": RoleCounter, "reference": RoleLookup}

func (d *decoder) tables(p *Plan, n *yaml.Node) {
	entries, _ := d.mapping(n, "tables")
	for _, e := range entries {
		path := join("tables", e.Key)
		if !isIdent(e.Key) {
			d.errAt(e.KeyN, path, "%q is not a table name", e.Key)
			continue
		}
		p.Tables = append(p.Tables, d.table(p, e, path))
	}
	if len(p.Tables) == 0 {
		d.errAt(resolve(n), "tables", "the schema declares no tables")
	}
	for _, ent := range p.Entities {
		var primary *Table
		var others []*Table
		for _, t := range p.Tables {
			if t.Entity != ent.Name {
				continue
			}
			if t.Role != RolePrimary {
				others = append(others, t)
				continue
			}
			if primary != nil {
				d.errLine(t.Lines["role"], join(join("tables", t.Name), "role"), "entity %q already has primary table %q (line %d)", ent.Name, primary.Name, primary.Line)
				continue
			}
			primary = t
		}
		if primary == nil && len(others) > 0 {
			d.errLine(others[0].Line, join("tables", others[0].Name), "entity %q has copies but no primary table to be their source of truth", ent.Name)
		}
	}
}

// tableDecl keeps what a table's checks need beyond the Table itself.
type tableDecl struct {
	t        *Table
	path     string
	ent      *Entity
	each     *Child
	nodes    map[string]*yaml.Node
	families bool // the file has a families section
}

func (d *decoder) table(p *Plan, e entry, path string) *Table {
	t := &Table{Name: e.Key, Line: e.KeyN.Line, Lines: Lines{}}
	td := &tableDecl{t: t, path: path, nodes: map[string]*yaml.Node{}}
	entries, _ := d.mapping(e.Value, path, tableKeys...)
	for _, x := range entries {
		t.Lines[x.Key] = x.KeyN.Line
		td.nodes[x.Key] = x.Value
	}
	if n, ok := td.nodes["role"]; ok {
		if r, ok := d.enum(n, join(path, "role"), string(RolePrimary), string(RoleIndex), string(RoleCounter), string(RoleLookup)); ok {
			t.Role = Role(r)
		}
	} else {
		d.errLine(t.Line, path, "table %q has no role (primary, index, counter or lookup)", t.Name)
	}
	if t.Role != "" {
		for key, role := range roleOnly {
			if line, ok := t.Lines[key]; ok && t.Role != role {
				d.errLine(line, join(path, key), "%q belongs to %s tables, not %s", key, role, t.Role)
			}
		}
		if line, ok := t.Lines["columns"]; ok && t.Role == RoleCounter {
			d.errLine(line, join(path, "columns"), "a counter table's cells are declared by add, not columns")
		}
	}
	d.tableSettings(p, td)
	if n, ok := td.nodes["entity"]; ok {
		if name, ok := d.str(n, join(path, "entity")); ok {
			t.Entity = name
			if td.ent = p.Entity(name); td.ent == nil {
				d.errAt(resolve(n), join(path, "entity"), "unknown entity %q", name)
			}
		}
	} else {
		d.errLine(t.Line, path, "table %q names no entity", t.Name)
	}
	if td.ent == nil {
		d.families(td, nil)
		return t
	}
	if n, ok := td.nodes["each"]; ok {
		if name, ok := d.str(n, join(path, "each")); ok {
			if td.each = td.ent.Child(name); td.each == nil {
				d.errAt(resolve(n), join(path, "each"), "entity %q has no child list %q", td.ent.Name, name)
			} else if t.Role == RolePrimary {
				d.errAt(resolve(n), join(path, "each"), "a primary table holds one row per entity; store child lists with template columns such as \"i:{%s}\"", td.each.Key)
			} else {
				t.Each = name
			}
		}
	}
	if t.Role == RoleLookup {
		d.lookupReference(td)
	}
	d.rowkey(td)
	if n, ok := td.nodes["when"]; ok {
		if name, ok := d.str(n, join(path, "when")); ok {
			if t.Role == RolePrimary {
				d.errAt(resolve(n), join(path, "when"), "a primary table holds every entity; when is for copies")
			} else if d.field(td, name, lineOf(n), join(path, "when")) != nil {
				t.When = name
			}
		}
	}
	var cols []*Column
	if n, ok := td.nodes["columns"]; ok && t.Role != RoleCounter {
		cols = d.columns(td, n)
	}
	var adds []*Add
	if t.Role == RoleCounter {
		adds = d.counter(td)
	}
	// Families come after columns and adds: without a families section the
	// table gets exactly the families its cells name.
	var used []string
	for _, c := range cols {
		used = appendUnique(used, c.Family)
	}
	for _, a := range adds {
		used = appendUnique(used, a.Family)
	}
	d.families(td, used)
	for _, c := range cols {
		if t.Family(c.Family) == nil {
			d.errLine(c.Line, join(join(path, "columns"), c.Name()), "family %q is not declared in families", c.Family)
		}
	}
	for _, a := range adds {
		if t.Family(a.Family) == nil {
			d.errLine(a.Line, join(join(path, "add"), a.Family+":"+a.Qualifier), "family %q is not declared in families", a.Family)
		}
	}
	t.Columns = cols
	switch t.Role {
	case RolePrimary:
		d.checkPrimary(td)
	case RoleIndex:
		d.checkIndex(td)
	case RoleLookup:
		d.checkUnique(td, "lookup")
		d.checkLookupKey(td)
	}
	if (t.Role == RoleIndex || t.Role == RoleLookup) && len(t.Families) > 0 {
		t.Ref = &Column{Family: t.Families[0].Name, Qualifier: RefQualifier, Line: t.Line}
		for _, c := range t.Columns {
			if c.Family == t.Ref.Family && c.Qualifier == RefQualifier {
				d.errLine(c.Line, join(join(path, "columns"), c.Name()), "%s is reserved for the reference to the primary row", c.Name())
			}
		}
	}
	return t
}

func appendUnique(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

// tableSettings reads the per-table operational overrides.
func (d *decoder) tableSettings(p *Plan, td *tableDecl) {
	t := td.t
	t.Presplit, t.Durability, t.Regenerable = p.Ops.Presplit, p.Ops.Durability, p.Ops.Regenerable
	if t.Presplit == 0 {
		t.Presplit = 1
	}
	if n, ok := td.nodes["presplit"]; ok {
		if v, ok := d.integer(n, join(td.path, "presplit"), 1, 100000); ok {
			t.Presplit = int(v)
		}
	}
	if n, ok := td.nodes["durability"]; ok {
		t.Durability, _ = d.enum(n, join(td.path, "durability"), durabilities...)
	}
	if n, ok := td.nodes["regenerable"]; ok {
		t.Regenerable, _ = d.boolean(n, join(td.path, "regenerable"))
	}
	if n, ok := td.nodes["description"]; ok {
		d.str(n, join(td.path, "description"))
	}
}

// field finds a field a table may use: the entity's own, or a field of the
// child list the table has one row per.
func (d *decoder) field(td *tableDecl, path string, line int, at string) *Field {
	f := td.ent.Field(path)
	if f == nil {
		d.errLine(line, at, "%q is not a field of entity %q", path, td.ent.Name)
		return nil
	}
	if f.Child != "" && f.Child != td.t.Each {
		d.errLine(line, at, "%q is a field of child list %q; the table needs `each: %s` to use it", path, f.Child, f.Child)
		return nil
	}
	return f
}

func (d *decoder) rowkey(td *tableDecl) {
	t, at := td.t, join(td.path, "rowkey")
	n, ok := td.nodes["rowkey"]
	if !ok {
		d.errLine(t.Line, td.path, "table %q has no rowkey", t.Name)
		return
	}
	exprs, lines, _ := d.strList(n, at)
	exprs, lines = rejoinCalls(exprs, lines)
	if len(exprs) == 0 {
		d.errAt(resolve(n), at, "the rowkey has no parts")
		return
	}
	var parts []rowkey.Part
	good := true
	for i, x := range exprs {
		part, err := rowkey.ParsePart(x)
		if err != nil {
			d.errLine(lines[i], index(at, i), "%v", err)
			good = false
			continue
		}
		f := d.field(td, part.Field, lines[i], index(at, i))
		if f == nil {
			good = false
			continue
		}
		part.Type = f.Type
		parts = append(parts, part)
	}
	if !good {
		return
	}
	spec, err := rowkey.NewSpec(parts)
	if err != nil {
		d.errLine(lines[0], at, "%v", err)
		return
	}
	t.Key, t.KeyLines = spec, lines
}

// rejoinCalls undoes YAML's split of an unquoted call in a flow list:
// [salt(orderId, 8), status] reads as "salt(orderId", "8)", "status".
func rejoinCalls(exprs []string, lines []int) ([]string, []int) {
	var outE []string
	var outL []int
	for i := 0; i < len(exprs); i++ {
		e := exprs[i]
		for strings.Count(e, "(") > strings.Count(e, ")") && i+1 < len(exprs) && lines[i+1] == lines[i] &&
			!strings.Contains(exprs[i+1], "(") && strings.Contains(exprs[i+1], ")") {
			i++
			e += ", " + exprs[i]
		}
		outE = append(outE, e)
		outL = append(outL, lines[i])
	}
	return outE, outL
}

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

func (d *decoder) counter(td *tableDecl) []*Add {
	t := td.t
	t.Counter = &Counter{Buckets: 1}
	if n, ok := td.nodes["buckets"]; ok {
		if v, ok := d.integer(n, join(td.path, "buckets"), 1, rowkey.MaxSaltBuckets); ok {
			t.Counter.Buckets = int(v)
		}
	}
	if n, ok := td.nodes["mode"]; ok {
		if v, ok := d.enum(n, join(td.path, "mode"), string(CounterFast), string(CounterExact)); ok {
			t.Counter.Mode = CounterMode(v)
		}
	}
	n, ok := td.nodes["add"]
	if !ok {
		d.errLine(t.Line, td.path, "counter table %q adds nothing (add: {family:qualifier: field})", t.Name)
		return nil
	}
	at := join(td.path, "add")
	entries, _ := d.mapping(n, at)
	for _, e := range entries {
		cp := join(at, e.Key)
		fam, qual, ok := strings.Cut(e.Key, ":")
		if !ok || !isIdent(fam) || strings.ContainsAny(qual, "{}") {
			d.errAt(e.KeyN, cp, "%q is not family:qualifier", e.Key)
			continue
		}
		a := &Add{Family: fam, Qualifier: qual, Line: e.KeyN.Line}
		v := resolve(e.Value)
		if v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
			c, err := strconv.ParseInt(v.Value, 0, 64)
			if err != nil {
				d.errAt(v, cp, "%q is not a whole number", v.Value)
				continue
			}
			a.Const = c
		} else {
			name, ok := d.str(e.Value, cp)
			if !ok {
				continue
			}
			f := d.field(td, name, lineOf(e.Value), cp)
			if f == nil {
				continue
			}
			if !f.Type.Integer() {
				d.errAt(v, cp, "a counter adds numbers; %q is %v (want int32 or int64)", name, f.Type)
				continue
			}
			a.Field = name
		}
		t.Counter.Adds = append(t.Counter.Adds, a)
	}
	if len(entries) == 0 {
		d.errAt(resolve(n), at, "counter table %q adds nothing", t.Name)
	}
	return t.Counter.Adds
}

var (
	compressions = []string{"NONE", "SNAPPY", "GZ", "LZ4", "ZSTD", "LZO", "BZIP2", "LZMA"}
	encodings    = []string{"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"}
	blooms       = []string{"NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH", "ROWPREFIX_DELIMITED"}
	durabilities = []string{DurabilitySyncWAL, DurabilityAsyncWAL, DurabilitySkipWAL, DurabilityFsyncWAL}
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
		attrs, _ := d.mapping(e.Value, fp, "versions", "ttl", "compression", "encoding", "blocksize", "bloom", "in_memory")
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
			}
		}
		t.Families = append(t.Families, f)
	}
	if len(t.Families) == 0 {
		d.errAt(resolve(n), at, "table %q declares no families", t.Name)
	}
}
