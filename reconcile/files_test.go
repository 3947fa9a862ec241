package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/write"
)

// A plan and a partial result survive their files, and bad files are
// refused with an error.
func TestPlanAndPartialFiles(t *testing.T) {
	ctx := context.Background()
	sp := loadPlan(t, false)
	st := openStore(t, sp)
	apply(t, ctx, write.New(sp, st, write.Options{}), genEvents(t, sp, gen.OrdersOptions{Events: 300, Seed: 2}))
	p, err := NewPlan(ctx, sp, st, PlanOptions{Parts: 3, RangeRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := WritePlan(path, p); err != nil {
		t.Fatal(err)
	}
	back, err := ReadPlan(path)
	if err != nil || !reflect.DeepEqual(back, p) || back.ID() != p.ID() || back.Check(sp) != nil {
		t.Fatalf("plan round trip: %v\n%+v\n%+v", err, back, p)
	}
	res, err := RunPart(ctx, sp, st, p, 1, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePartial(dir, res); err != nil {
		t.Fatal(err)
	}
	parts, err := ReadPartials(dir)
	if err != nil || len(parts) != 1 || !reflect.DeepEqual(parts[0], res) {
		t.Fatalf("partial round trip: %v", err)
	}
	// Merge refuses an incomplete set of parts.
	if _, err := Merge(ctx, sp, st, p, parts, Options{DryRun: true}); !errors.Is(err, ErrResults) {
		t.Fatalf("merged one part of three: %v", err)
	}
	// Nor results of another plan.
	other := *p
	other.Parts = 4
	if _, err := Merge(ctx, sp, st, &other, parts, Options{DryRun: true}); !errors.Is(err, ErrResults) {
		t.Fatalf("merged results of another plan: %v", err)
	}
	for _, bad := range []string{`{}`, `{"format":1,"parts":0}`, `{"format":1,"parts":2,"tables":[{"primary":"orders","splits":["Yg==","YQ=="]}]}`, `{"format":1,"parts":1,"extra":1}`} {
		if _, err := ParsePlan([]byte(bad)); err == nil {
			t.Errorf("plan %s accepted", bad)
		}
	}
	for _, bad := range []string{`{}`, `{"format":1}`, `{"format":1,"report":{"kinds":{"index":null}}}`} {
		if _, err := ParsePartial([]byte(bad)); err == nil {
			t.Errorf("partial %s accepted", bad)
		}
	}
}

func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(`{"format":1,"parts":2,"tables":[{"primary":"orders","splits":["YQ=="],"derived":[{"table":"orders_by_status","splits":["YQ==","Yg=="]}]}]}`))
	f.Add([]byte(`{"format":1,"parts":1,"tables":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePlan(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParsePlan(again); err != nil {
			t.Fatalf("a parsed plan does not parse again: %v", err)
		}
	})
}

func FuzzParsePartial(f *testing.F) {
	f.Add([]byte(`{"format":1,"plan":"ab","part":0,"primary_parts":[0],"ranges":[{"table":"t","range":0,"expect":{"sum":"000000000000000000000000000000ff","cells":1,"copies":1}}],"report":{"rows_scanned":1,"dry_run":true,"kinds":{"index":{}},"ranges":{"equal":0,"unequal":0}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParsePartial(b)
		if err != nil {
			return
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
