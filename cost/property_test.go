package cost

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomSchema builds a schema whose every size is fixed by declarations,
// so that the estimate and the cells Measure writes must agree exactly.
func randomSchema(rng *rand.Rand) string {
	name := func(n int) string { return strings.Repeat("q", n) }
	idSize := 3 + rng.IntN(20)
	statusSize := 1 + rng.IntN(12)
	skuSize := 1 + rng.IntN(16)
	typical := 1 + rng.IntN(6)
	fam := name(1 + rng.IntN(4))
	return fmt.Sprintf(`
name: prop
entities:
  order:
    key: id
    fields: {id: {type: string, size: %d}, status: {type: string, size: %d}, total: int64, at: timestamp}
    children:
      items:
        key: line
        max: 50
        typical: %d
        fields: {line: int32, sku: {type: string, size: %d}, qty: int32}
tables:
  orders:
    role: primary
    entity: order
    rowkey: [id]
    families: {%s: {}}
    columns: {"%s:%s": status, "%s:%s": total, "%s:%s": at, "%s:%s{line}": items}
  by_sku:
    role: index
    entity: order
    each: items
    rowkey: [items.sku, reverse(at), id]
    covering: [items.qty]
    families: {x: {}}
    columns: {x:%s: items.qty}
  by_status:
    role: index
    entity: order
    rowkey: [salt(id, %d), status, id]
    covering: []
    families: {y: {}}
`, idSize, statusSize, typical, skuSize, fam,
		fam, name(1+rng.IntN(8)), fam, name(1+rng.IntN(8))+"t", fam, name(1+rng.IntN(8))+"a", fam, name(rng.IntN(5)),
		name(1+rng.IntN(6)), 1+rng.IntN(16))
}

func TestEstimateEqualsMeasuredOnRandomSchemas(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 5 {
		src := randomSchema(rng)
		p := parse(t, src)
		m, err := Measure(context.Background(), openPebble(t), p, 40)
		if err != nil {
			t.Fatalf("schema %d: %v\n%s", i, err, src)
		}
		if len(m.Tables) != 3 {
			t.Fatalf("schema %d: %d tables measured, want 3", i, len(m.Tables))
		}
		for _, tm := range m.Tables {
			if math.Abs(tm.LogicalPerRecord-tm.EstimatePerRecord) > 1e-9 {
				t.Errorf("schema %d, table %s: measured %.3f, estimated %.3f\n%s", i, tm.Table, tm.LogicalPerRecord, tm.EstimatePerRecord, src)
			}
		}
	}
}
