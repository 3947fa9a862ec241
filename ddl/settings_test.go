package ddl

import (
	"context"
	"strings"
	"testing"

	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

const settingsTables = `
  events:
    role: primary
    entity: event
    rowkey: [hash(device, 1), device, reverse(at), id]
    presplit: 4
    region_replicas: 2
    split_policy: disabled
    max_row_size: 64MiB
    families:
      d: {versions: 3, min_versions: 1, ttl: 30d, compaction: date_tiered, keep_deleted_cells: TTL}
      b: {mob: true, mob_threshold: 200KiB, blockcache: false}
`

// The settings the catalogue's fixes name reach the create statement.
func TestCreateStatementCarriesSettings(t *testing.T) {
	sts, err := Generate(parse(t, settingsTables))
	if err != nil {
		t.Fatal(err)
	}
	text := sts[0].Text
	for _, want := range []string{
		"MIN_VERSIONS => 1", "KEEP_DELETED_CELLS => \"TTL\"",
		"CONFIGURATION => {\"hbase.hstore.engine.class\" => \"org.apache.hadoop.hbase.regionserver.DateTieredStoreEngine\"}",
		"IS_MOB => true", "MOB_THRESHOLD => 204800", "BLOCKCACHE => \"false\"",
		"REGION_REPLICATION => 2", "SPLIT_POLICY => \"org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy\"",
		"METADATA => {\"hbase.table.max.rowsize\" => \"67108864\"}",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("create statement lacks %s:\n%s", want, text)
		}
	}
}

// Create passes them to the store, which keeps what it supports (and
// refuses what it cannot honour: Pebble has no KEEP_DELETED_CELLS).
func TestCreatePassesSettingsToTheStore(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Create(ctx, st, parse(t, settingsTables)); err == nil || !strings.Contains(err.Error(), "keep deleted cells") {
		t.Fatalf("want Pebble to refuse KEEP_DELETED_CELLS, got %v", err)
	}
	p := parse(t, strings.Replace(settingsTables, ", keep_deleted_cells: TTL", "", 1))
	if _, err := Create(ctx, st, p); err != nil {
		t.Fatal(err)
	}
	spec, err := st.DescribeTable(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := spec.Family("d")
	b, _ := spec.Family("b")
	if spec.RegionReplicas != 2 || spec.SplitPolicy != store.SplitDisabled || spec.MaxRowSize != 64<<20 ||
		d.MinVersions != 1 || d.Compaction != store.CompactionDateTiered || !b.MOB || b.MOBThreshold != 200<<10 || !b.NoBlockCache {
		t.Errorf("stored spec %+v", spec)
	}
}
