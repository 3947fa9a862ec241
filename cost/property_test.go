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
func randomSchema(rng *rand.Rand, prefix string) string {
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
    fields: {id: {type: string, size: %[2]d}, status: {type: string, size: %[3]d}, total: int64, at: timestamp}
    children:
      items:
        key: line
        max: 50
        typical: %[4]d
        fields: {line: int32, sku: {type: string, size: %[5]d}, qty: int32}
tables:
  %[1]sorders:
    role: primary
    entity: order
    rowkey: [id]
    families: {%[6]s: {}}
    columns: {"%[7]s:%[8]s": status, "%[9]s:%[10]s": total, "%[11]s:%[12]s": at, "%[13]s:%[14]s{line}": items}
  %[1]sby_sku:
    role: index
    entity: order
    each: items
    rowkey: [items.sku, reverse(at), id, items.line]
    covering: [items.qty]
    families: {x: {}}
    columns: {x:%[15]s: items.qty}
  %[1]sby_status:
    role: index
    entity: order
    rowkey: [salt(id, %[16]d), status, id]
    covering: []
    families: {y: {}}
`, prefix, idSize, statusSize, typical, skuSize, fam,
		fam, name(1+rng.IntN(8)), fam, name(1+rng.IntN(8))+"t", fam, name(1+rng.IntN(8))+"a", fam, name(rng.IntN(5)),
		name(1+rng.IntN(6)), 1+rng.IntN(16))
}

func TestEstimateEqualsMeasuredOnRandomSchemas(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 5 {
		src := randomSchema(rng, "")
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
