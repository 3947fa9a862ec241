package schema

import (
	"slices"
	"strings"
	"time"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/store"
)

// Lines maps a YAML key of an element to the line it is written on, so that
// a finding about, say, a family's ttl can point at that very line. Keys not
// written in the file are absent.
type Lines map[string]int

// Plan is a checked, compiled schema. It is read-only once returned.
type Plan struct {
	File        string // the name given to Parse (the path for Load)
	Name        string
	Description string
	Entities    []*Entity
	Tables      []*Table
	Queries     []*Query
	Workload    *Workload // never nil; Line 0 when the file has no workload
	Client      *Client   // never nil
	Ops         *Ops      // never nil
	Lines       Lines     // top-level sections
}

// Entity finds an entity by name, or nil.
func (p *Plan) Entity(name string) *Entity {
	for _, e := range p.Entities {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Table finds a table by name, or nil.
func (p *Plan) Table(name string) *Table {
	for _, t := range p.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Query finds a query by name, or nil.
func (p *Plan) Query(name string) *Query {
	for _, q := range p.Queries {
		if q.Name == name {
			return q
		}
	}
	return nil
}

// Primary is the entity's primary table, or nil when it has none.
func (p *Plan) Primary(entity string) *Table {
	for _, t := range p.Tables {
		if t.Entity == entity && t.Role == RolePrimary {
			return t
		}
	}
	return nil
}

// Locator is the entity's locator table, or nil when it has none.
func (p *Plan) Locator(entity string) *Table {
	for _, t := range p.Tables {
		if t.Entity == entity && t.Role == RoleLocator {
			return t
		}
	}
	return nil
}

// NeedsLocator reports whether the entity's primary row key holds fields
// beyond the entity key, so that a change of one moves the entity to
// another row.
func (p *Plan) NeedsLocator(entity string) bool {
	t, ent := p.Primary(entity), p.Entity(entity)
	if t == nil || ent == nil || t.Key == nil {
		return false
	}
	for _, f := range t.Key.Fields() {
		if !slices.Contains(ent.Key, f) {
			return true
		}
	}
	return false
}

// TablesOf lists the tables holding rows of the entity, primary first and
// then in file order: the order a writer applies an event in. The locator
// is the writer's bookkeeping, not a copy, and is not listed.
func (p *Plan) TablesOf(entity string) []*Table {
	var out []*Table
	if t := p.Primary(entity); t != nil {
		out = append(out, t)
	}
	for _, t := range p.Tables {
		if t.HoldsCopiesOf(entity) {
			out = append(out, t)
		}
	}
	return out
}

// HoldsCopiesOf reports whether t holds rows derived from entity: one of
// the entity's TablesOf other than its primary. Code that runs for every
// state tests this over Plan.Tables rather than building TablesOf.
func (t *Table) HoldsCopiesOf(entity string) bool {
	return t.Entity == entity && t.Role != RolePrimary && t.Role != RoleLocator
}

// VersionKind says what an entity's version numbers are. It matters because
// versions become cell timestamps, and HBase measures TTL against them.
type VersionKind string

const (
	// VersionEvent: a per-entity counter (1, 2, 3, ...). A family TTL would
	// see such cells as written in 1970 and expire them at once.
	VersionEvent VersionKind = "event"
	// VersionEpochMillis: milliseconds since the epoch, safe with TTL.
	VersionEpochMillis VersionKind = "epoch_ms"
)

// Entity is one kind of record the writer receives events for.
type Entity struct {
	Name        string
	Line        int
	Key         []string // field names that identify one entity, usually one
	Version     string   // the field holding the version; "" when none is declared
	VersionKind VersionKind
	Fields      []*Field // top-level fields, in file order
	Children    []*Child
	References  []*Reference
	Lines       Lines
}

// Field finds a field by path: "status", or "items.sku" for a child's field.
func (e *Entity) Field(path string) *Field { return e.FieldAt(e.Ref(path)) }

// Child finds a child list by name, or nil.
func (e *Entity) Child(name string) *Child {
	for _, c := range e.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Copy finds the reference copy that fills a field, or nil when the field
// is the entity's own.
func (e *Entity) Copy(path string) (*Reference, *Copy) {
	for _, r := range e.References {
		for _, c := range r.Copies {
			if c.Field == path {
				return r, c
			}
		}
	}
	return nil, nil
}

// Field is one typed value of an entity or of a child.
type Field struct {
	Name  string // "sku"
	Path  string // "sku" for an entity field, "items.sku" for a child's
	Child string // the child list it belongs to; "" for entity fields
	Type  rowkey.Type
	// Size is the typical encoded size in bytes as declared (`size:`), 0 when
	// not declared; AvgSize gives a usable figure either way.
	Size int64
	// MaxSize is the largest value the field may hold (`max_size:`), 0
	// when not declared: what decides whether a cell can pass the limit.
	MaxSize int64
	Line    int
}

// Default typical sizes for fields that do not declare one.
const (
	DefaultStringSize = 16
	DefaultBytesSize  = 64
)

// AvgSize is the declared size, or the type's width, or a default guess for
// strings and bytes.
func (f *Field) AvgSize() int64 {
	if f.Size > 0 {
		return f.Size
	}
	if w := f.Type.FixedWidth(); w > 0 {
		return int64(w)
	}
	if f.Type == rowkey.Bytes {
		return DefaultBytesSize
	}
	return DefaultStringSize
}

// Child is a bounded list embedded in its entity (one cell per element in a
// wide row, or one row per element in tables declared with `each`).
type Child struct {
	Name    string
	Line    int
	Key     string // field name unique within one entity's list, e.g. "line"
	Max     int    // the bound; the loader refuses a list without one
	Typical int    // usual element count (`typical:`), 0 when not declared
	Fields  []*Field
	Lines   Lines
}

// Field finds a child field by name (without the list prefix), or nil.
func (c *Child) Field(name string) *Field {
	for _, f := range c.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Intent is what a copied field is for.
type Intent string

const (
	// IntentNone: the schema does not say (review flags it).
	IntentNone Intent = ""
	// IntentSnapshot: the value as of the write, never refreshed (the price
	// paid).
	IntentSnapshot Intent = "snapshot"
	// IntentLive: a cached view of the referenced entity, refreshed from its
	// events through a lookup table.
	IntentLive Intent = "live"
)

// Reference links an entity to another one whose fields it copies.
type Reference struct {
	Name   string
	Line   int
	Entity string // the referenced entity
	Key    string // local field path holding the referenced entity's key, e.g. "items.sku"
	Copies []*Copy
	// Live lists the From of every copy with intent live, in Copies'
	// order: the writer walks them for every state it derives.
	Live  []string
	Lines Lines
}

// Copy is one copied field.
type Copy struct {
	Field  string // local field path filled by the copy, e.g. "items.name"
	From   string // field of the referenced entity, e.g. "name"
	Intent Intent
	Line   int
}

// Role is what a table is for.
type Role string

const (
	RolePrimary Role = "primary" // the source of truth: one row per entity
	RoleIndex   Role = "index"   // a copy keyed for another query; thin or covering
	RoleCounter Role = "counter" // pre-aggregated sums, updated by Increment
	RoleLookup  Role = "lookup"  // reference key -> referencing rows, to refresh live copies
	// RoleFanout: a copy of each entity into every element of another
	// entity's list (a post into each follower's home timeline). Declared
	// so that review and cost can price its writes; denorm's writer does
	// not write it.
	RoleFanout Role = "fanout"
	// RoleLocator: entity key -> the primary row key the entity lives at,
	// and whether it was deleted. An entity whose primary row key holds
	// fields beyond its key (an order under its customer and date) can
	// move when one of them changes; the writer finds it here, whatever
	// order its events arrive in. Not a copy of any field.
	RoleLocator Role = "locator"
)

// Fanout is where a fanout table's copies go: one row per element of a
// child list of the entity the reference points at.
type Fanout struct {
	Reference string // the table entity's reference, e.g. "author"
	Entity    string // the referenced entity, e.g. "user"
	List      string // its child list, e.g. "followers"
	Typical   int    // the list's typical length (its max when not declared)
	Max       int    // the list's bound: the most rows one event writes
	Line      int
}

// Table is one HBase table and how entity data maps onto it.
type Table struct {
	Name   string
	Line   int
	Role   Role
	Entity string
	// Each names a child list when the table has one row per child element
	// (an index by items.sku, a counter per SKU); "" for one row per entity.
	Each string
	Key  *rowkey.Spec
	// KeyLines holds the line of each key part, parallel to Key.Parts().
	KeyLines []int
	Families []*Family
	Columns  []*Column
	// Covering lists the field paths an index copies; empty means a thin
	// index that holds only the way back to the primary row.
	Covering []string
	Counter  *Counter // set for counter tables
	// Reference names the entity reference a lookup table serves.
	Reference string
	// Ref is the cell every index and lookup row carries: RefQualifier in
	// the table's first family, holding the primary row key, so a reader can
	// verify the entry and a repair can find the source row. Nil for primary
	// and counter tables.
	Ref *Column
	// When names a field that must be set (not absent, empty, zero or
	// false) for an entity to have a row here: a partial copy such as an
	// alerts table that only holds readings with an alert. "" for every
	// entity.
	When string
	// KeyRefs holds where the value of each key part's fields lives, per
	// part in the order of Key.Part(i).Fields(); WhenRef is When's (Slot
	// -1 when When is ""). Assigned by Parse for the tables of an entity.
	KeyRefs     [][]FieldRef
	WhenRef     FieldRef
	Presplit    int    // regions at creation: the table's own setting, else ops.presplit, else 1
	Durability  string // the table's own setting, else ops.durability
	Regenerable bool   // the table's own setting, else ops.regenerable
	// Fanout is set for fanout tables.
	Fanout *Fanout
	// RegionReplicas, SplitPolicy and MaxRowSize are the table's HBase
	// settings (zero: HBase's defaults); Spec passes them to the store.
	RegionReplicas int
	SplitPolicy    string
	MaxRowSize     int64
	Lines          Lines
}

// RefQualifier is the qualifier of Table.Ref.
const RefQualifier = "r"

// Thin reports whether the table is an index that copies no fields.
func (t *Table) Thin() bool { return t.Role == RoleIndex && len(t.Covering) == 0 }

// ElementCollision reports the first covered child field of a per-element
// index whose row key lacks the child key: two elements of one entity with
// the same key values then share a row, and the covered values of one
// overwrite the other's. Empty when there is no such field. (Not a load
// error yet, so that existing schemas keep loading; review should flag it.)
func (t *Table) ElementCollision(p *Plan) string {
	if t.Role != RoleIndex || t.Each == "" || t.Key == nil {
		return ""
	}
	ent := p.Entity(t.Entity)
	if ent == nil || ent.Child(t.Each) == nil {
		return ""
	}
	c := ent.Child(t.Each)
	if t.Key.Recoverable(c.Name + "." + c.Key) {
		return ""
	}
	for _, f := range t.Covering {
		if strings.HasPrefix(f, c.Name+".") {
			return f
		}
	}
	return ""
}

// Family finds a family by name, or nil.
func (t *Table) Family(name string) *Family {
	for _, f := range t.Families {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Spec is the table as the store creates it (split keys are left to the
// ddl package, which knows the key distribution).
func (t *Table) Spec() store.TableSpec {
	spec := store.TableSpec{Name: t.Name, RegionReplicas: t.RegionReplicas, SplitPolicy: t.SplitPolicy, MaxRowSize: t.MaxRowSize}
	for _, f := range t.Families {
		spec.Families = append(spec.Families, f.FamilySpec)
	}
	return spec
}

// ColumnFor finds the column that stores a field path (or, for a whole
// child record, the child name), or nil.
func (t *Table) ColumnFor(path string) *Column {
	for _, c := range t.Columns {
		if c.Field == path || (c.Field == "" && c.Child == path) {
			return c
		}
	}
	return nil
}

// Family is a column family with its settings. Settings not written in the
// file are zero (HBase's defaults apply); Lines says which were written.
type Family struct {
	store.FamilySpec
	Line  int
	Lines Lines
}

// Column maps a family:qualifier to a field.
type Column struct {
	Family string
	// Qualifier is the qualifier as written. For a template such as
	// "{line}" or "q{line}" the real qualifier is Prefix, the encoded child
	// key, then Suffix.
	Qualifier string
	Template  bool
	Prefix    string
	Suffix    string
	// Child is the child list a template column holds one cell per element
	// of; "" for plain columns.
	Child string
	// Field is the field path whose value the cell holds; "" when a
	// template column holds the whole child element.
	Field string
	// Slot is where Field's value lives (assigned by Parse; Slot -1 when
	// Field is "").
	Slot FieldRef
	Line int
}

// Name is "family:qualifier" as written.
func (c *Column) Name() string { return c.Family + ":" + c.Qualifier }

// CounterMode says how a counter table guards against double counting.
type CounterMode string

const (
	// CounterFast: plain increments; a retried event counts twice, and the
	// reconcile job corrects the drift.
	CounterFast CounterMode = "fast"
	// CounterExact: each entity's contribution is a cell of its own in the
	// counter row (a put of a value, so exact under replay); the row grows
	// with the number of contributing entities.
	CounterExact CounterMode = "exact"
	// CounterBounded: exact too, with a row of one total per add column
	// and one sequence per log stream (partition): each batch's delta is
	// applied once per stream by a check-and-mutate, and each entity's
	// primary row records what the totals hold of it (docs/writer.md).
	CounterBounded CounterMode = "bounded"
)

// Bounded reports whether the counter keeps bounded totals.
func (c *Counter) Bounded() bool { return c != nil && c.Mode == CounterBounded }

// Counter is the aggregation of a counter table.
type Counter struct {
	// Buckets spreads one logical counter over this many rows (a trailing
	// bucket byte after the key, summed on read); 1 means a single row.
	Buckets int
	Mode    CounterMode // "" when the file does not say
	Adds    []*Add
}

// Add is one counter cell and what each event adds to it.
type Add struct {
	Family    string
	Qualifier string
	Field     string   // numeric field path added; "" when Const is added
	Slot      FieldRef // where Field's value lives (Slot -1 when Field is "")
	Const     int64
	Line      int
}

// ScanShape is how a query reads its table.
type ScanShape string

const (
	ShapeGet    ScanShape = "get"    // one row, every key part fixed
	ShapePrefix ScanShape = "prefix" // bounded range(s) on a key prefix
	ShapeRange  ScanShape = "range"  // no prefix, but a range on the key's first part
	ShapeFull   ScanShape = "full"   // reads the whole table
)

// Query is one access pattern.
type Query struct {
	Name     string
	Line     int
	Table    string
	By       []string // field paths the caller supplies
	Limit    int      // rows; 0 when not declared
	Rate     float64  // per second; 0 when not declared
	Latency  time.Duration
	FullScan bool   // the file says `scan: full`
	Range    *Range // optional range on the key part after the fixed prefix
	// Where lists equality predicates (`where:`); those on fields the key
	// prefix does not fix are filters, listed in Bound.Unused too.
	Where []*Predicate
	// MultiGet is the number of keys one call asks for (a batch of gets);
	// 0 when the query is not a multi-get.
	MultiGet int
	// Direction is forward (ascending keys, the default) or reverse;
	// "" when the file does not say.
	Direction string
	// Profile names the client profile (client.profiles) the query's
	// callers use; "" for the client section's own settings.
	Profile string
	// Bound is how By meets the table's key: fixed leading parts, salt
	// fan-out, and fields left over for filtering.
	Bound rowkey.Bound
	Shape ScanShape
	Lines Lines
}

// Range is a query's range over one field, typically the newest part of a
// time-ordered key ("the last hour").
type Range struct {
	Field string
	Last  time.Duration // the window ending now; 0 when not declared
	// Calendar names a calendar period instead (today, this_month...).
	Calendar string
	// From and To are absolute bounds in epoch milliseconds, [From, To).
	From, To       int64
	HasFrom, HasTo bool
	// OnKey reports whether the field is read by the key part right after
	// the fixed prefix, so the range narrows the scan instead of filtering.
	OnKey bool
	Line  int
}

// Workload is the expected load, for sizing and hotspot simulation.
type Workload struct {
	Line            int
	WritesPerSecond float64
	// Entities is the total number of entities stored; EntityCounts splits
	// it by entity when the file gives a map.
	Entities     int64
	EntityCounts map[string]int64
	// EntityWrites gives some entities their own event rate
	// (writes_by_entity); the others take WritesPerSecond.
	EntityWrites map[string]float64
	Keys         []*Distribution
	Lines        Lines
}

// Distribution describes how one field's values are spread.
type Distribution struct {
	Entity string
	Field  string // field path within the entity
	// Kind is uniform, zipf, sequential (ever increasing, like a clock or a
	// sequence) or weighted (explicit values and weights).
	Kind        string
	Cardinality int64
	Skew        float64            // zipf exponent s
	Values      map[string]float64 // weighted: value -> share
	Line        int
}

// Distribution kinds.
const (
	DistUniform    = "uniform"
	DistZipf       = "zipf"
	DistSequential = "sequential"
	DistWeighted   = "weighted"
)

// Distribution finds the declared distribution of entity.field, or nil.
func (w *Workload) Distribution(entity, field string) *Distribution {
	for _, d := range w.Keys {
		if d.Entity == entity && d.Field == field {
			return d
		}
	}
	return nil
}

// Client is how applications talk to the cluster. Zero values mean the
// file does not say.
type Client struct {
	// Name is the profile's name; "" for the client section itself.
	Name             string
	Line             int
	RPCTimeout       time.Duration
	OperationTimeout time.Duration
	ScannerTimeout   time.Duration
	WriteBuffer      int64  // bytes
	Connection       string // per_process | per_request
	Batching         string // buffered | batch | single
	BatchSize        int    // mutations per batch call
	// Profiles are the settings of particular workloads (a request path, a
	// batch job), each its own connection with its own timeouts; settings a
	// profile leaves out are the client section's. Only the section itself
	// has profiles.
	Profiles []*Client
	Lines    Lines
}

// Profile finds a client profile by name, or nil.
func (c *Client) Profile(name string) *Client {
	for _, p := range c.Profiles {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Client settings' values.
const (
	ConnectionPerProcess = "per_process"
	ConnectionPerRequest = "per_request"
	BatchingBuffered     = "buffered"
	BatchingBatch        = "batch"
	BatchingSingle       = "single"
)

// Ops is how the tables are run. Zero values mean the file does not say.
type Ops struct {
	Line              int
	Presplit          int    // regions per table at creation
	MajorCompaction   string // manual | periodic
	Offpeak           *Window
	Durability        string // sync_wal | async_wal | skip_wal | fsync_wal
	Regenerable       bool   // the data can be rebuilt from elsewhere
	RegionMaxFilesize int64  // bytes
	Lines             Lines
}

// Ops settings' values.
const (
	CompactionManual   = "manual"
	CompactionPeriodic = "periodic"
	DurabilitySyncWAL  = "sync_wal"
	DurabilityAsyncWAL = "async_wal"
	DurabilitySkipWAL  = "skip_wal"
	DurabilityFsyncWAL = "fsync_wal"
)

// Window is a daily window of hours [StartHour, EndHour), UTC; it may wrap
// past midnight.
type Window struct {
	StartHour int
	EndHour   int
}
