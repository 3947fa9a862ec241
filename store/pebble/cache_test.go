package pebble

import (
	"context"
	"testing"

	"github.com/denorm/denorm/store"
)

// A store opened with the default options caches the blocks its reads load
// once its memtables are full-sized: Pebble charges the memtables to the
// block cache, and a cache no larger than them (Pebble's own default) never
// kept a block.
func TestDefaultCacheKeepsBlocks(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}}); err != nil {
		t.Fatal(err)
	}
	value := benchValue(1)
	for i := 0; i < 2000; i++ {
		if err := st.Mutate(ctx, "t", benchMutation(i, value)); err != nil {
			t.Fatal(err)
		}
	}
	// Pebble doubles a memtable's size at every flush up to MemTableSize:
	// after a few, one memtable outgrows Pebble's default cache.
	for i := 0; i < 8; i++ {
		if err := st.Mutate(ctx, "t", benchMutation(i, value)); err != nil {
			t.Fatal(err)
		}
		if err := st.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Compacted into one level, the store leaves Pebble nothing to compact
	// between the two passes below (a compaction writes blocks anew, under
	// new cache keys, and a read can set one off): what misses then is the
	// cache's doing. The grown memtable stays charged to the cache.
	if err := st.db.Compact(ctx, []byte{0}, []byte{0xff, 0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	read := func() {
		for i := 0; i < 2000; i += 20 {
			if r, err := st.Get(ctx, "t", store.Get{Row: benchRow(i)}); err != nil || r.Empty() {
				t.Fatalf("Get row %d: %v (empty %v)", i, err, r.Empty())
			}
		}
	}
	read()
	before := st.db.Metrics().BlockCache
	read()
	after := st.db.Metrics().BlockCache
	// A compaction of the flushed files may still rewrite some blocks
	// between the passes, so a few misses are allowed; without room for
	// blocks, every read misses.
	hits, misses := after.Hits-before.Hits, after.Misses-before.Misses
	if after.Count == 0 || hits < 4*misses {
		t.Errorf("second pass over the same rows: %d blocks cached, %d hits, %d misses; want mostly hits",
			after.Count, hits, misses)
	}
}
