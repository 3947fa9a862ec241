package schema

import (
	"go.yaml.in/yaml/v3"
)

var tableKeys = []string{"role", "entity", "each", "rowkey", "families", "columns", "covering",
	"buckets", "add", "mode", "reference", "when", "presplit", "durability", "regenerable", "description",
	"region_replicas", "split_policy", "max_row_size", "fanout"}

// keys only some roles accept
var roleOnly = map[string]Role{"covering": RoleIndex, "buckets": RoleCounter, "add": RoleCounter, "mode": RoleCounter, "reference": RoleLookup, "fanout": RoleFanout}

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
		var locator *Table
		for _, t := range others {
			if t.Role != RoleLocator {
				continue
			}
			if locator != nil {
				d.errLine(t.Lines["role"], join(join("tables", t.Name), "role"), "entity %q already has locator table %q (line %d)", ent.Name, locator.Name, locator.Line)
			}
			locator = t
		}
		if primary == nil && len(others) > 0 {
			d.errLine(others[0].Line, join("tables", others[0].Name), "entity %q has copies but no primary table to be their source of truth", ent.Name)
		}
		d.checkLiveLookups(ent, others)
	}
}

// checkLiveLookups requires a lookup table for every reference that copies
// fields live: a change of the referenced entity finds the rows to refresh
// through it, and without one the writer could not apply that change.
func (d *decoder) checkLiveLookups(ent *Entity, tables []*Table) {
	for _, r := range ent.References {
		if len(r.Live) == 0 {
			continue
		}
		served := false
		for _, t := range tables {
			served = served || t.Role == RoleLookup && t.Reference == r.Name
		}
		if !served {
			d.errLine(r.Line, join(join(join("entities", ent.Name), "references"), r.Name), "reference %q copies %v live, and no lookup table serves it: add a table with role: lookup, entity: %s, reference: %s, so that a change of %s can find the rows to refresh", r.Name, r.Live, ent.Name, r.Name, r.Entity)
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
	families bool   // the file has a families section
	fanList  *Child // a fanout table's target list, of another entity
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
		if r, ok := d.enum(n, join(path, "role"), string(RolePrimary), string(RoleIndex), string(RoleCounter), string(RoleLookup), string(RoleLocator), string(RoleFanout)); ok {
			t.Role = Role(r)
		}
	} else {
		d.errLine(t.Line, path, "table %q has no role (primary, index, counter, lookup or locator)", t.Name)
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
		if t.Role == RoleLocator {
			for _, key := range []string{"columns", "each", "when"} {
				if line, ok := t.Lines[key]; ok {
					d.errLine(line, join(path, key), "a locator table holds the writer's own cells; %q does not apply", key)
				}
			}
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
	if t.Role == RoleFanout {
		d.fanoutSource(p, td)
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
	case RoleLocator:
		d.checkLocatorKey(td)
	case RoleFanout:
		d.checkUnique(td, "fanout")
		d.checkFanoutKey(td)
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
	d.storageSettings(td)
}

// field finds a field a table may use: the entity's own, or a field of the
// child list the table has one row per.
func (d *decoder) field(td *tableDecl, path string, line int, at string) *Field {
	if f := td.fanoutField(path); f != nil {
		return f
	}
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

var (
	compressions = []string{"NONE", "SNAPPY", "GZ", "LZ4", "ZSTD", "LZO", "BZIP2", "LZMA"}
	encodings    = []string{"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"}
	blooms       = []string{"NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH", "ROWPREFIX_DELIMITED"}
	durabilities = []string{DurabilitySyncWAL, DurabilityAsyncWAL, DurabilitySkipWAL, DurabilityFsyncWAL}
)
