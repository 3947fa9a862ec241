package ddl

import (
	"context"
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"testing"
	"time"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase" // registers hbase://
	"github.com/denorm/denorm/store/pebble"
)

// The split keys ddl chooses, given to a real store, must make one region
// per salt bucket, and every row of bucket b must land in region b.
func checkSaltRegions(t *testing.T, st store.Store, name string) {
	ctx := context.Background()
	p := parse(t, fmt.Sprintf(`
  %s:
    role: primary
    entity: event
    rowkey: [salt(device, 6), device, reverse(at), id]
    families:
      d: {}
`, name))
	tbl := p.Tables[0]
	splits, _, err := SplitKeys(tbl)
	if err != nil {
		t.Fatal(err)
	}
	spec := tbl.Spec()
	spec.SplitKeys = splits
	_ = st.DropTable(ctx, name) // a leftover from an earlier run
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	defer st.DropTable(ctx, name)
	regions, err := st.Regions(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(regions) != 6 {
		t.Fatalf("%d regions, want 6 (one per bucket)", len(regions))
	}
	for i := range 200 {
		key, err := tbl.Key.Encode(rowkey.Values{"device": fmt.Sprintf("dev-%d", i), "at": int64(1_700_000_000_000 + i), "id": fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if !regions[key[0]].Contains(key) {
			t.Fatalf("row of bucket %d is not in region %d [%x, %x)", key[0], key[0], regions[key[0]].Start, regions[key[0]].End)
		}
	}
}

func TestSaltSplitsOnPebble(t *testing.T) {
	st, err := pebble.Open(context.Background(), t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkSaltRegions(t, st, "events")
}

func TestSaltSplitsOnHBase(t *testing.T) {
	raw := testenv.HBaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkSaltRegions(t, st, fmt.Sprintf("ddl_salt_test_%d", time.Now().UnixNano()%1_000_000))
}
