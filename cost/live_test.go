package cost

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase" // registers hbase://
)

// Measure against real HBase: the cells written must match the estimate
// there too. HBase's store does not report disk usage through Thrift2.
func TestMeasureOnHBase(t *testing.T) {
	raw := os.Getenv("DENORM_HBASE_URL")
	if raw == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DENORM_HBASE_URL is not set; CI must run the HBase tests")
		}
		t.Skip("DENORM_HBASE_URL is not set (e.g. hbase://127.0.0.1:9090)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	prefix := fmt.Sprintf("cost_%d_", time.Now().UnixNano()%1_000_000_000)
	p := parse(t, randomSchema(rand.New(rand.NewPCG(3, 5)), prefix))
	defer func() {
		for _, tbl := range p.Tables {
			_ = st.DropTable(context.Background(), tbl.Name)
		}
	}()
	m, err := Measure(ctx, st, p, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) != 3 {
		t.Fatalf("%d tables", len(m.Tables))
	}
	for _, tm := range m.Tables {
		if math.Abs(tm.LogicalPerRecord-tm.EstimatePerRecord) > 1e-9 {
			t.Errorf("%s: measured %.3f, estimated %.3f", tm.Table, tm.LogicalPerRecord, tm.EstimatePerRecord)
		}
	}
	rows := 0
	sc, err := st.Scan(ctx, prefix+"orders", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for sc.Next(ctx) {
		rows++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 50 {
		t.Errorf("HBase holds %d rows of %sorders, want 50", rows, prefix)
	}
}
