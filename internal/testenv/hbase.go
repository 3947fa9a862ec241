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
		ctx := context.Background()
		tables, err := st.ListTables(ctx)
		if err != nil {
			tb.Errorf("list tables to drop: %v", err)
		}
		for _, t := range tables {
			if err := st.DropTable(ctx, t); err != nil && !errors.Is(err, store.ErrTableNotFound) {
				tb.Errorf("drop %s%s: %v", st.Prefix, t, err)
			}
		}
		raw.Close()
	})
	return st
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
