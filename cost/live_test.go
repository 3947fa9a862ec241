package cost

import (
	"context"
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase" // registers hbase://
)

// Measure against real HBase: the cells written must match the estimate
// there too. HBase's store does not report disk usage through Thrift2.
func TestMeasureOnHBase(t *testing.T) {
	raw := testenv.HBaseURL(t)
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
