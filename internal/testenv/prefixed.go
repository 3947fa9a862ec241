package testenv

import (
	"context"
	"strings"

	"github.com/denorm/denorm/store"
)

// Prefixed gives every table name a prefix, so that tests can share one
// store (a real HBase, or an embedded store holding many runs) without
// sharing tables. It deliberately has no Sync: wrap it again where a test
// needs the Sync of the store below.
type Prefixed struct {
	store.Store
	Prefix string
}

func (p *Prefixed) CreateTable(ctx context.Context, spec store.TableSpec) error {
	spec.Name = p.Prefix + spec.Name
	return p.Store.CreateTable(ctx, spec)
}

func (p *Prefixed) DescribeTable(ctx context.Context, t string) (store.TableSpec, error) {
	spec, err := p.Store.DescribeTable(ctx, p.Prefix+t)
	spec.Name = strings.TrimPrefix(spec.Name, p.Prefix)
	return spec, err
}

func (p *Prefixed) ListTables(ctx context.Context) ([]string, error) {
	all, err := p.Store.ListTables(ctx)
	var out []string
	for _, t := range all {
		if strings.HasPrefix(t, p.Prefix) {
			out = append(out, strings.TrimPrefix(t, p.Prefix))
		}
	}
	return out, err
}

func (p *Prefixed) DropTable(ctx context.Context, t string) error {
	return p.Store.DropTable(ctx, p.Prefix+t)
}

func (p *Prefixed) Regions(ctx context.Context, t string) ([]store.Region, error) {
	return p.Store.Regions(ctx, p.Prefix+t)
}

func (p *Prefixed) MajorCompact(ctx context.Context, t string) error {
	return p.Store.MajorCompact(ctx, p.Prefix+t)
}

func (p *Prefixed) Get(ctx context.Context, t string, g store.Get) (store.Row, error) {
	return p.Store.Get(ctx, p.Prefix+t, g)
}

func (p *Prefixed) Scan(ctx context.Context, t string, s store.Scan) (store.Scanner, error) {
	return p.Store.Scan(ctx, p.Prefix+t, s)
}

func (p *Prefixed) Mutate(ctx context.Context, t string, m store.RowMutation) error {
	return p.Store.Mutate(ctx, p.Prefix+t, m)
}

func (p *Prefixed) Batch(ctx context.Context, t string, ms []store.RowMutation) ([]error, error) {
	return p.Store.Batch(ctx, p.Prefix+t, ms)
}

func (p *Prefixed) Increment(ctx context.Context, t string, inc store.Increment) ([]int64, error) {
	return p.Store.Increment(ctx, p.Prefix+t, inc)
}

func (p *Prefixed) CheckAndMutate(ctx context.Context, t string, c store.Condition, m store.RowMutation) (bool, error) {
	return p.Store.CheckAndMutate(ctx, p.Prefix+t, c, m)
}

// GetMany passes on to the store below's multi-get, or its Gets when it
// has none.
func (p *Prefixed) GetMany(ctx context.Context, t string, gets []store.Get) ([]store.Row, error) {
	return store.GetMany(ctx, p.Store, p.Prefix+t, gets)
}
