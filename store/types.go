package store

import (
	"bytes"
	"math"
	"time"
)

// LatestTimestamp asks the backend to stamp a cell with its own clock
// (milliseconds since the epoch), as HBase's HConstants.LATEST_TIMESTAMP does.
// denorm's writer never uses it: its cells carry event versions.
const LatestTimestamp int64 = math.MaxInt64

// Defaults that match HBase 2.x (see hbase-default.xml).
const (
	DefaultMaxCellSize = 10 << 20 // hbase.client.keyvalue.maxsize
	DefaultMaxRowSize  = 1 << 30  // hbase.table.max.rowsize
	DefaultMaxVersions = 1        // VERSIONS of a column family in HBase 2
)

// FamilySpec is one column family and the settings HBase keeps for it.
// Compression, DataBlockEncoding, BlockSize, BloomFilter and InMemory are
// recorded and passed to backends that honour them (HBase); the embedded
// store records them only.
type FamilySpec struct {
	Name              string        `json:"name"`
	MaxVersions       int           `json:"max_versions,omitempty"` // 0 means DefaultMaxVersions
	TTL               time.Duration `json:"ttl,omitempty"`          // 0 means forever; HBase keeps whole seconds
	Compression       string        `json:"compression,omitempty"`  // NONE, SNAPPY, GZ, LZ4, ZSTD
	DataBlockEncoding string        `json:"data_block_encoding,omitempty"`
	BlockSize         int           `json:"block_size,omitempty"` // bytes; 0 means the backend default (64 KiB on HBase)
	BloomFilter       string        `json:"bloom_filter,omitempty"`
	InMemory          bool          `json:"in_memory,omitempty"`
	// MinVersions is how many versions of a column survive its TTL
	// (MIN_VERSIONS); 0 lets the TTL expire every version.
	MinVersions int `json:"min_versions,omitempty"`
	// KeepDeletedCells is HBase's KEEP_DELETED_CELLS: "" or FALSE (the
	// default), TRUE or TTL. Backends that cannot keep deleted cells
	// readable refuse TRUE and TTL.
	KeepDeletedCells string `json:"keep_deleted_cells,omitempty"`
	// MOB stores values at or above MOBThreshold bytes (0: HBase's 100 KiB
	// default) in separate MOB files instead of the store files.
	MOB          bool  `json:"mob,omitempty"`
	MOBThreshold int64 `json:"mob_threshold,omitempty"`
	// NoBlockCache turns the block cache off for the family (BLOCKCACHE
	// false); the zero value keeps HBase's default, on.
	NoBlockCache bool `json:"no_block_cache,omitempty"`
	// Compaction names the store engine: "" (the default engine),
	// "date_tiered" (time series: files by cell timestamp, old windows
	// left alone) or "stripe" (large regions cut in key stripes).
	Compaction string `json:"compaction,omitempty"`
}

// Store engines a FamilySpec.Compaction may name.
const (
	CompactionDateTiered = "date_tiered"
	CompactionStripe     = "stripe"
)

// Versions returns the effective maximum number of versions.
func (f FamilySpec) Versions() int {
	if f.MaxVersions <= 0 {
		return DefaultMaxVersions
	}
	return f.MaxVersions
}

// TableSpec describes a table at creation time. SplitKeys, sorted and
// distinct, give the first row of every region after the first.
type TableSpec struct {
	Name      string       `json:"name"`
	Families  []FamilySpec `json:"families"`
	SplitKeys [][]byte     `json:"split_keys,omitempty"`
	// RegionReplicas is REGION_REPLICATION: copies of each region served
	// for timeline-consistent reads (0 or 1: none besides the primary).
	RegionReplicas int `json:"region_replicas,omitempty"`
	// SplitPolicy names how regions split: "" (HBase's default, stepping),
	// "disabled", "constant_size", "increasing", "stepping" or
	// "busy_region".
	SplitPolicy string `json:"split_policy,omitempty"`
	// MaxRowSize fails reads of a larger row (hbase.table.max.rowsize, set
	// on the table); 0 keeps the backend's limit.
	MaxRowSize int64 `json:"max_row_size,omitempty"`
}

// Split policies a TableSpec.SplitPolicy may name.
const (
	SplitDisabled     = "disabled"
	SplitConstantSize = "constant_size"
	SplitIncreasing   = "increasing"
	SplitStepping     = "stepping"
	SplitBusyRegion   = "busy_region"
)

// SplitPolicyClass is the HBase class behind a split policy name ("" for
// an unknown one).
func SplitPolicyClass(name string) string {
	const pkg = "org.apache.hadoop.hbase.regionserver."
	switch name {
	case SplitDisabled:
		return pkg + "DisabledRegionSplitPolicy"
	case SplitConstantSize:
		return pkg + "ConstantSizeRegionSplitPolicy"
	case SplitIncreasing:
		return pkg + "IncreasingToUpperBoundRegionSplitPolicy"
	case SplitStepping:
		return pkg + "SteppingSplitPolicy"
	case SplitBusyRegion:
		return pkg + "BusyRegionSplitPolicy"
	}
	return ""
}

// StoreEngineClass is the HBase store engine (hbase.hstore.engine.class)
// behind a FamilySpec.Compaction name ("" for the default or an unknown
// one).
func StoreEngineClass(name string) string {
	switch name {
	case CompactionDateTiered:
		return "org.apache.hadoop.hbase.regionserver.DateTieredStoreEngine"
	case CompactionStripe:
		return "org.apache.hadoop.hbase.regionserver.StripeStoreEngine"
	}
	return ""
}

// SplitPolicies lists the names TableSpec.SplitPolicy accepts.
func SplitPolicies() []string {
	return []string{SplitDisabled, SplitConstantSize, SplitIncreasing, SplitStepping, SplitBusyRegion}
}

// Family returns the named family's spec.
func (t TableSpec) Family(name string) (FamilySpec, bool) {
	for _, f := range t.Families {
		if f.Name == name {
			return f, true
		}
	}
	return FamilySpec{}, false
}

// Region is one contiguous key range of a table, [Start, End); an empty End
// means the end of the table. Request counts are cumulative since the region
// opened, as HBase's /jmx reports them.
type Region struct {
	Table         string `json:"table"`
	ID            string `json:"id"`
	Start         []byte `json:"start"`
	End           []byte `json:"end"`
	Server        string `json:"server,omitempty"`
	ReadRequests  int64  `json:"read_requests"`
	WriteRequests int64  `json:"write_requests"`
}

// Contains reports whether row falls in the region.
func (r Region) Contains(row []byte) bool {
	return bytes.Compare(row, r.Start) >= 0 && (len(r.End) == 0 || bytes.Compare(row, r.End) < 0)
}

// Cell is one versioned value.
type Cell struct {
	Row       []byte `json:"row"`
	Family    string `json:"family"`
	Qualifier []byte `json:"qualifier"`
	Timestamp int64  `json:"timestamp"`
	Value     []byte `json:"value"`
}

// Row is the visible cells of one row, sorted by family, qualifier, then
// timestamp descending. A Row with no cells means the row does not exist (or
// nothing matched the read).
type Row struct {
	Key   []byte `json:"key"`
	Cells []Cell `json:"cells"`
}

// Empty reports whether the read found nothing.
func (r Row) Empty() bool { return len(r.Cells) == 0 }

// Clone returns a deep copy of r: a scanner's Row is valid only until its
// next call, and a Row kept past that must be copied.
func (r Row) Clone() Row {
	out := Row{Key: bytes.Clone(r.Key), Cells: make([]Cell, len(r.Cells))}
	for i, c := range r.Cells {
		c.Row, c.Qualifier, c.Value = bytes.Clone(c.Row), bytes.Clone(c.Qualifier), bytes.Clone(c.Value)
		out.Cells[i] = c
	}
	return out
}

// Latest returns the newest visible value of a column.
func (r Row) Latest(family string, qualifier []byte) (Cell, bool) {
	for _, c := range r.Cells {
		if c.Family == family && bytes.Equal(c.Qualifier, qualifier) {
			return c, true // cells are newest first within a column
		}
	}
	return Cell{}, false
}

// Column names a family, or one column of it when Qualifier is non-nil.
type Column struct {
	Family    string
	Qualifier []byte // nil: the whole family
}

// TimeRange selects timestamps in [Min, Max). The zero value selects all.
type TimeRange struct {
	Min int64
	Max int64 // 0 means no upper bound
}

// Contains reports whether ts falls in the range.
func (tr TimeRange) Contains(ts int64) bool {
	return ts >= tr.Min && (tr.Max == 0 || ts < tr.Max)
}

// Get reads one row.
type Get struct {
	Row         []byte
	Columns     []Column // empty: every family
	MaxVersions int      // 0 means 1; never more than the family keeps
	TimeRange   TimeRange
}

// Scan reads rows in [Start, Stop). With Reverse, rows come in descending
// order and, as in HBase, Start is the inclusive upper row and Stop the
// exclusive lower one. Empty Start or Stop means unbounded on that side.
type Scan struct {
	Start       []byte
	Stop        []byte
	Reverse     bool
	Limit       int // rows; 0 means no limit
	Columns     []Column
	MaxVersions int
	TimeRange   TimeRange
	// Batch caps the cells in one Row returned by the scanner, so that a wide
	// row arrives in pieces (HBase's Scan.setBatch). Consecutive pieces share
	// the row key. 0 means whole rows.
	Batch int
	// Caching is how many rows a remote backend fetches per round trip.
	Caching int
}

// Kind is the kind of one mutation. The delete kinds mirror HBase's
// KeyValue types.
type Kind uint8

const (
	// Put writes a value at Timestamp.
	Put Kind = iota + 1
	// DeleteVersion deletes the one version of a column at exactly Timestamp
	// (HBase type Delete, code 8).
	DeleteVersion
	// DeleteColumn deletes every version of a column at or below Timestamp
	// (DeleteColumn, code 12).
	DeleteColumn
	// DeleteFamily deletes every column of a family at or below Timestamp
	// (DeleteFamily, code 14).
	DeleteFamily
	// DeleteRow deletes every family of the row at or below Timestamp.
	DeleteRow
)

var kindNames = [...]string{Put: "put", DeleteVersion: "delete_version", DeleteColumn: "delete_column", DeleteFamily: "delete_family", DeleteRow: "delete_row"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + string(rune('0'+k)) + ")"
}

// Mutation is one change to a row. Family is ignored by DeleteRow; Qualifier
// by DeleteFamily and DeleteRow; Value by every delete.
type Mutation struct {
	Kind      Kind
	Family    string
	Qualifier []byte
	Timestamp int64 // LatestTimestamp: the backend's clock
	Value     []byte
}

// Durability is how a mutation reaches the write-ahead log, named as HBase
// names it.
type Durability uint8

const (
	// DurabilityDefault uses the backend's (and on HBase, the table's) setting.
	DurabilityDefault Durability = iota
	// SyncWAL acknowledges after the log is synced.
	SyncWAL
	// AsyncWAL acknowledges before the log is synced: a crash may lose the
	// last moments of acknowledged writes.
	AsyncWAL
	// SkipWAL does not log at all: a crash loses every unflushed write.
	SkipWAL
)

// ParseDurability accepts sync_wal, async_wal, skip_wal and default.
func ParseDurability(s string) (Durability, bool) {
	switch s {
	case "", "default":
		return DurabilityDefault, true
	case "sync_wal":
		return SyncWAL, true
	case "async_wal":
		return AsyncWAL, true
	case "skip_wal":
		return SkipWAL, true
	}
	return 0, false
}

func (d Durability) String() string {
	switch d {
	case SyncWAL:
		return "sync_wal"
	case AsyncWAL:
		return "async_wal"
	case SkipWAL:
		return "skip_wal"
	}
	return "default"
}

// RowMutation is the atomic unit of writing: every mutation of one row.
type RowMutation struct {
	Row        []byte
	Mutations  []Mutation
	Durability Durability
}

// Size is an estimate of the bytes the mutation sends, used for buffering.
func (m RowMutation) Size() int {
	n := len(m.Row)
	for _, x := range m.Mutations {
		n += len(x.Family) + len(x.Qualifier) + len(x.Value) + 9
	}
	return n
}

// Increment adds Delta to each column's 8-byte big-endian signed value (a
// missing column counts as 0), atomically on the row.
type Increment struct {
	Row     []byte
	Columns []IncrementColumn
}

// IncrementColumn is one counter cell of an Increment.
type IncrementColumn struct {
	Family    string
	Qualifier []byte
	Delta     int64
}

// Condition is the check of a CheckAndMutate: the newest visible value of
// Family:Qualifier equals Value, or, when Absent is set, no visible value
// exists.
type Condition struct {
	Family    string
	Qualifier []byte
	Value     []byte
	Absent    bool
}
