package hbase

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// hbaseForever is the TTL HBase reports for a family that never expires
// (HConstants.FOREVER, Integer.MAX_VALUE seconds).
const hbaseForever = math.MaxInt32

// familyDescriptor translates a family spec. Settings the spec leaves
// empty are left unset, so HBase applies its defaults.
func familyDescriptor(f store.FamilySpec) (*hbase2.TColumnFamilyDescriptor, error) {
	if f.Name == "" {
		return nil, fmt.Errorf("a family has no name")
	}
	d := &hbase2.TColumnFamilyDescriptor{Name: []byte(f.Name), MaxVersions: int32Ptr(f.Versions())}
	if f.TTL != 0 {
		if f.TTL < 0 || f.TTL%time.Second != 0 || f.TTL/time.Second >= hbaseForever {
			return nil, fmt.Errorf("family %s: TTL %v: HBase keeps TTLs in whole seconds, from 1s to %ds: %w", f.Name, f.TTL, hbaseForever-1, store.ErrUnsupported)
		}
		d.TimeToLive = int32Ptr(int(f.TTL / time.Second))
	}
	if f.Compression != "" {
		v, err := hbase2.TCompressionAlgorithmFromString(strings.ToUpper(f.Compression))
		if err != nil {
			return nil, fmt.Errorf("family %s: compression %q: want one of NONE, GZ, SNAPPY, LZ4, ZSTD, LZO, BZIP2", f.Name, f.Compression)
		}
		d.CompressionType = &v
	}
	if f.DataBlockEncoding != "" {
		v, err := hbase2.TDataBlockEncodingFromString(strings.ToUpper(f.DataBlockEncoding))
		if err != nil {
			return nil, fmt.Errorf("family %s: data block encoding %q: want one of NONE, PREFIX, DIFF, FAST_DIFF, ROW_INDEX_V1", f.Name, f.DataBlockEncoding)
		}
		d.DataBlockEncoding = &v
	}
	if f.BloomFilter != "" {
		v, err := hbase2.TBloomFilterTypeFromString(strings.ToUpper(f.BloomFilter))
		if err != nil || v == hbase2.TBloomFilterType_ROWPREFIX_FIXED_LENGTH {
			// The prefix bloom needs a prefix length, which travels in the
			// family's configuration that FamilySpec does not carry.
			return nil, fmt.Errorf("family %s: bloom filter %q: want one of NONE, ROW, ROWCOL", f.Name, f.BloomFilter)
		}
		d.BloomFilterType = &v
	}
	if f.BlockSize < 0 {
		return nil, fmt.Errorf("family %s: block size %d is negative", f.Name, f.BlockSize)
	}
	if f.BlockSize > 0 {
		d.BlockSize = int32Ptr(f.BlockSize)
	}
	inMemory := f.InMemory
	d.InMemory = &inMemory
	if f.MinVersions < 0 || f.MinVersions > f.Versions() {
		return nil, fmt.Errorf("family %s: min versions %d: want 0 to the family's %d versions", f.Name, f.MinVersions, f.Versions())
	}
	if f.MinVersions > 0 {
		d.MinVersions = int32Ptr(f.MinVersions)
	}
	// The gateway's descriptor has no fields for these; HBase reads them
	// from the family's values, which the attributes set.
	attrs := map[string][]byte{}
	switch k := strings.ToUpper(f.KeepDeletedCells); k {
	case "", "FALSE":
	case "TRUE", "TTL":
		attrs[attrKeepDeleted] = []byte(k)
	default:
		return nil, fmt.Errorf("family %s: keep deleted cells %q: want FALSE, TRUE or TTL", f.Name, f.KeepDeletedCells)
	}
	if f.MOB {
		attrs[attrMOB] = []byte("true")
		if f.MOBThreshold > 0 {
			attrs[attrMOBThreshold] = []byte(strconv.FormatInt(f.MOBThreshold, 10))
		}
	}
	if f.NoBlockCache {
		attrs[attrBlockCache] = []byte("false")
	}
	if len(attrs) > 0 {
		d.Attributes = attrs
	}
	if f.Compaction != "" {
		engine, ok := storeEngines[f.Compaction]
		if !ok {
			return nil, fmt.Errorf("family %s: compaction %q: want %s or %s", f.Name, f.Compaction, store.CompactionDateTiered, store.CompactionStripe)
		}
		d.Configuration = map[string]string{confStoreEngine: engine}
	}
	return d, nil
}

// Family values HBase keeps under these names (ColumnFamilyDescriptor).
const (
	attrKeepDeleted  = "KEEP_DELETED_CELLS"
	attrMOB          = "IS_MOB"
	attrMOBThreshold = "MOB_THRESHOLD"
	attrBlockCache   = "BLOCKCACHE"
	confStoreEngine  = "hbase.hstore.engine.class"
)

var storeEngines = map[string]string{
	store.CompactionDateTiered: store.StoreEngineClass(store.CompactionDateTiered),
	store.CompactionStripe:     store.StoreEngineClass(store.CompactionStripe),
}

// familyAttributes reads back the settings familyDescriptor sends as
// attributes and configuration.
func familyAttributes(f *store.FamilySpec, d *hbase2.TColumnFamilyDescriptor) {
	f.MinVersions = int(d.GetMinVersions())
	attrs := d.GetAttributes()
	if k := strings.ToUpper(string(attrs[attrKeepDeleted])); k == "TRUE" || k == "TTL" {
		f.KeepDeletedCells = k
	}
	f.MOB = strings.EqualFold(string(attrs[attrMOB]), "true")
	if f.MOB {
		f.MOBThreshold, _ = strconv.ParseInt(string(attrs[attrMOBThreshold]), 10, 64)
	}
	f.NoBlockCache = strings.EqualFold(string(attrs[attrBlockCache]), "false")
	engine := d.GetConfiguration()[confStoreEngine]
	for name, class := range storeEngines {
		if engine == class {
			f.Compaction = name
		}
	}
}

// familySpec translates back what HBase reports, defaults included.
func familySpec(d *hbase2.TColumnFamilyDescriptor) store.FamilySpec {
	f := store.FamilySpec{
		Name:        string(d.Name),
		MaxVersions: int(d.GetMaxVersions()),
		BlockSize:   int(d.GetBlockSize()),
		InMemory:    d.GetInMemory(),
	}
	if ttl := d.GetTimeToLive(); d.IsSetTimeToLive() && ttl > 0 && ttl < hbaseForever {
		f.TTL = time.Duration(ttl) * time.Second
	}
	if d.IsSetCompressionType() {
		f.Compression = d.GetCompressionType().String()
	}
	if d.IsSetDataBlockEncoding() {
		f.DataBlockEncoding = d.GetDataBlockEncoding().String()
	}
	if d.IsSetBloomFilterType() {
		f.BloomFilter = d.GetBloomFilterType().String()
	}
	familyAttributes(&f, d)
	return f
}
