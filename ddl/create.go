package ddl

import (
	"context"
	"errors"
	"fmt"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Create makes every table of the plan that the store lacks, with its
// families' settings and the split keys SplitKeys chooses. Tables that
// exist are left as they are; it returns the names it created.
func Create(ctx context.Context, st store.Store, p *schema.Plan) ([]string, error) {
	var created []string
	for _, t := range p.Tables {
		if _, err := st.DescribeTable(ctx, t.Name); err == nil {
			continue
		} else if !errors.Is(err, store.ErrTableNotFound) {
			return created, fmt.Errorf("ddl: describe %s: %w", t.Name, err)
		}
		spec := t.Spec()
		splits, _, err := SplitKeys(t)
		if err != nil {
			return created, fmt.Errorf("ddl: %s: %w", t.Name, err)
		}
		spec.SplitKeys = splits
		if err := st.CreateTable(ctx, spec); err != nil && !errors.Is(err, store.ErrTableExists) {
			return created, fmt.Errorf("ddl: create %s: %w", t.Name, err)
		}
		created = append(created, t.Name)
	}
	return created, nil
}
