package live

import (
	"context"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/testenv"
	_ "github.com/denorm/denorm/store/hbase" // registers hbase://
)

// The designs against the test environment's HBase: a time-led table, one
// with six families, a low-cardinality prefix, and a well-designed one.
func TestDesignsOnHBase(t *testing.T) {
	st := testenv.OpenHBase(t, "live")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, d := range designs() {
		t.Run(d.name, func(t *testing.T) {
			d.fill(ctx, t, st, d.name)
			obs := checkDesign(ctx, t, st, d, d.name)
			if len(d.spec.SplitKeys) > 0 && len(obs.Regions) != len(d.spec.SplitKeys)+1 {
				t.Errorf("%d regions, want %d", len(obs.Regions), len(d.spec.SplitKeys)+1)
			}
			if len(obs.Spec.Families) != len(d.spec.Families) {
				t.Errorf("described %d families, want %d", len(obs.Spec.Families), len(d.spec.Families))
			}
			checkDraft(t, obs, Review(obs))
		})
	}
}
