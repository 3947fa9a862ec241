package read

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase"
)

// Verify-on-read and read repair on real HBase: the same stale entries as
// on the embedded store, dropped, repaired at their own timestamps, and a
// newer entry written during the repair survives.
func TestHBaseStaleThinHits(t *testing.T) {
	ctx := context.Background()
	raw, err := store.Open(ctx, testenv.HBaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	// The test environment's HBase cannot compress with SNAPPY (no native
	// Hadoop libraries); GZ has a pure-Java fallback.
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := schema.Parse("orders-gz.yaml", []byte(strings.ReplaceAll(string(b), "compression: SNAPPY", "compression: GZ")))
	if err != nil {
		t.Fatal(err)
	}
	st := &testenv.Prefixed{Store: raw, Prefix: fmt.Sprintf("rd%x_", rand.Int63())}
	t.Cleanup(func() {
		for _, tbl := range plan.Tables {
			if err := st.DropTable(context.Background(), tbl.Name); err != nil && !errors.Is(err, store.ErrTableNotFound) {
				t.Errorf("drop %s: %v", tbl.Name, err)
			}
		}
		raw.Close()
	})
	testStaleThinHits(t, applyStream(t, st, t.TempDir(), plan, gen.OrdersOptions{Events: 600, Seed: 5, Customers: 40}))
}
