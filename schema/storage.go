package schema

import (
	"strings"

	"github.com/denorm/denorm/store"
)

// The HBase settings the catalogue's fixes name, beyond the basic family
// settings: MOB for large cells, MIN_VERSIONS and KEEP_DELETED_CELLS, the
// block cache, the store engine, and per table region replicas, the split
// policy and the max row size.

var familyKeys = []string{"versions", "ttl", "compression", "encoding", "blocksize", "bloom", "in_memory",
	"mob", "mob_threshold", "keep_deleted_cells", "min_versions", "blockcache", "compaction"}

var (
	keepDeleted = []string{"FALSE", "TRUE", "TTL"}
	engines     = []string{"default", store.CompactionDateTiered, store.CompactionStripe}
)

// Bounds of the settings; HBase takes more, no design needs more.
const (
	maxReplicas   = 10
	minMOBSize    = 1 << 10
	maxMOBSize    = 1 << 30
	minMaxRowSize = 1 << 10
	maxMaxRowSize = 1 << 40
)

// familyStorage reads one of the extended family settings.
func (d *decoder) familyStorage(f *Family, a entry, sp string) {
	switch a.Key {
	case "mob":
		f.MOB, _ = d.boolean(a.Value, sp)
	case "mob_threshold":
		if v, ok := d.size(a.Value, sp); ok {
			if v < minMOBSize || v > maxMOBSize {
				d.errAt(resolve(a.Value), sp, "MOB threshold %d is outside 1KiB..1GiB", v)
			}
			f.MOBThreshold = v
		}
	case "keep_deleted_cells":
		// YAML reads an unquoted TRUE or FALSE as a bool.
		if n := resolve(a.Value); n != nil && n.Tag == "!!bool" {
			if b, ok := d.boolean(a.Value, sp); ok && b {
				f.KeepDeletedCells = "TRUE"
			}
			return
		}
		if v, ok := d.enumFold(a.Value, sp, keepDeleted...); ok && strings.ToUpper(v) != "FALSE" {
			f.KeepDeletedCells = strings.ToUpper(v)
		}
	case "min_versions":
		if v, ok := d.integer(a.Value, sp, 0, 1<<31-1); ok {
			f.MinVersions = int(v)
		}
	case "blockcache":
		if on, ok := d.boolean(a.Value, sp); ok {
			f.NoBlockCache = !on
		}
	case "compaction":
		if v, ok := d.enum(a.Value, sp, engines...); ok && v != "default" {
			f.Compaction = v
		}
	}
}

// checkFamily checks settings against each other.
func (d *decoder) checkFamily(f *Family, fp string) {
	if f.MinVersions > f.Versions() {
		d.errLine(f.Lines["min_versions"], join(fp, "min_versions"), "min_versions %d is more than the %d versions the family keeps", f.MinVersions, f.Versions())
	}
	if f.MOBThreshold > 0 && !f.MOB {
		d.errLine(f.Lines["mob_threshold"], join(fp, "mob_threshold"), "mob_threshold is set but mob is not true")
	}
}

// storageSettings reads a table's region replicas, split policy and max
// row size.
func (d *decoder) storageSettings(td *tableDecl) {
	t := td.t
	if n, ok := td.nodes["region_replicas"]; ok {
		if v, ok := d.integer(n, join(td.path, "region_replicas"), 1, maxReplicas); ok {
			t.RegionReplicas = int(v)
		}
	}
	if n, ok := td.nodes["split_policy"]; ok {
		t.SplitPolicy, _ = d.enum(n, join(td.path, "split_policy"), store.SplitPolicies()...)
	}
	if n, ok := td.nodes["max_row_size"]; ok {
		if v, ok := d.size(n, join(td.path, "max_row_size")); ok {
			if v < minMaxRowSize || v > maxMaxRowSize {
				d.errAt(resolve(n), join(td.path, "max_row_size"), "max row size %d is outside 1KiB..1TiB", v)
			}
			t.MaxRowSize = v
		}
	}
}
