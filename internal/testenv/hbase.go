package testenv

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// OpenHBase opens the test environment's HBase with table names under a
// random prefix of the test's own (tag says whose, in HBase's table list).
// Every table under the prefix is dropped when the test ends. The caller
// imports store/hbase for its hbase:// scheme: this package cannot, since
// store/hbase's own tests import it.
func OpenHBase(tb testing.TB, tag string) *Prefixed {
	tb.Helper()
	raw, err := store.Open(context.Background(), HBaseURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	st := &Prefixed{Store: raw, Prefix: fmt.Sprintf("%s%x_", tag, rand.Int63())}
	tb.Cleanup(func() {
		if err := st.DropTables(context.Background()); err != nil {
			tb.Error(err)
		}
		raw.Close()
	})
	return st
}

// DropTables drops every table under the prefix. A benchmark that makes a
// fresh set of tables per iteration drops each set once it is measured, so
// that the server does not carry the regions (and memstores) of every set
// before it to the end of the run: a 1 GiB server ran out of heap after a
// dozen sets.
func (p *Prefixed) DropTables(ctx context.Context) error {
	tables, err := p.ListTables(ctx)
	if err != nil {
		return fmt.Errorf("list tables to drop: %w", err)
	}
	var errs []error
	for _, t := range tables {
		if err := p.DropTable(ctx, t); err != nil && !errors.Is(err, store.ErrTableNotFound) {
			errs = append(errs, fmt.Errorf("drop %s%s: %w", p.Prefix, t, err))
		}
	}
	return errors.Join(errs...)
}

// HBaseSchema loads a schema file as the test environment's HBase can hold
// it. That HBase runs from Maven artifacts without Hadoop's native
// libraries, so its SNAPPY codec fails HBase's compression check (and the
// pure-Java codec module is not to be had); GZ has a pure-Java fallback.
// Production clusters take SNAPPY as the examples declare it.
func HBaseSchema(tb testing.TB, path string) *schema.Plan {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := schema.Parse(path+" (GZ for the test HBase)", []byte(strings.ReplaceAll(string(b), "compression: SNAPPY", "compression: GZ")))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
