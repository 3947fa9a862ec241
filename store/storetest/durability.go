package storetest

import (
	"testing"

	"github.com/denorm/denorm/store"
)

var durabilityTests = []testCase{
	{"DurabilityValuesAccepted", testDurability},
}

var durabilities = []store.Durability{store.DurabilityDefault, store.SyncWAL, store.AsyncWAL, store.SkipWAL}

func testDurability(t *testing.T, e *env) {
	name := e.simple(1, "f")
	var batch []store.RowMutation
	var rows []string
	for _, d := range durabilities {
		row := "mutate_" + d.String()
		m := rowPut(row, "f", d.String())
		m.Durability = d
		if err := e.st.Mutate(e.ctx, name, m); err != nil {
			t.Errorf("Mutate with durability %s: %v", d, err)
		}
		rows = append(rows, row)
		bm := rowPut("batch_"+d.String(), "f", d.String())
		bm.Durability = d
		batch = append(batch, bm)
		rows = append(rows, "batch_"+d.String())
	}
	errs, err := e.st.Batch(e.ctx, name, batch)
	if err != nil {
		t.Fatalf("Batch with mixed durabilities: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("Batch row %s: %v", batch[i].Row, err)
		}
	}
	for _, d := range durabilities {
		ok, err := e.st.CheckAndMutate(e.ctx, name, store.Condition{Family: "f", Qualifier: []byte("c"), Absent: true},
			store.RowMutation{Row: []byte("cam_" + d.String()), Durability: d, Mutations: []store.Mutation{
				{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte(d.String())},
			}})
		if err != nil || !ok {
			t.Errorf("CheckAndMutate with durability %s: %v, %v", d, ok, err)
		}
		rows = append(rows, "cam_"+d.String())
	}
	for _, row := range rows {
		if e.get(name, store.Get{Row: []byte(row)}).Empty() {
			t.Errorf("row %s is missing", row)
		}
	}
}
