package read

import (
	"os"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/schema"
	_ "github.com/denorm/denorm/store/hbase" // the backend behind hbase:// URLs
)

// Verify-on-read and read repair on real HBase: the same stale entries as
// on the embedded store, dropped, repaired at their own timestamps, and a
// newer entry written during the repair survives.
func TestHBaseStaleThinHits(t *testing.T) {
	st := testenv.OpenHBase(t, "rd")
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	testStaleThinHits(t, applyStream(t, st, t.TempDir(), plan, gen.OrdersOptions{Events: 600, Seed: 5, Customers: 40}))
}

// A page of thin hits checked in parts, each part a getMultiple call of
// its own, agrees with the page checked in one.
func TestHBaseVerifyPartsAgree(t *testing.T) {
	st := testenv.OpenHBase(t, "rp")
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	testVerifyPartsAgree(t, applyStream(t, st, t.TempDir(), plan, partsStream))
}

// Pages of a salted index read with the buckets opened at once, as on
// HBase they are, agree with pages read with the buckets opened in turn.
func TestHBaseOpenAtOnceAgrees(t *testing.T) {
	st := testenv.OpenHBase(t, "ro")
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	testOpenAtOnceAgrees(t, applyStream(t, st, t.TempDir(), plan, partsStream))
}

// BenchmarkHBaseVerifyParts is BenchmarkVerifyParts on real HBase, where a
// part is a getMultiple call and the parts are sent at once.
func BenchmarkHBaseVerifyParts(b *testing.B) {
	st := testenv.OpenHBase(b, "rb")
	plan := testenv.HBaseSchema(b, "../examples/orders.yaml")
	benchVerifyParts(b, applyStream(b, st, b.TempDir(), plan, gen.OrdersOptions{Events: 4000, Seed: 11, Customers: 60}))
}

// TestHBaseReadRepairConverges runs histories of TestReadRepairConverges
// with the store that is read, and its writer that dies, on the test
// HBase: the reads there check a page's hits in parts sent at once, and
// open a salted key's buckets at once.
func TestHBaseReadRepairConverges(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets, err := os.ReadFile("../write/testdata/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := schema.Parse("tickets.yaml", append(tickets, ticketQueries...))
	if err != nil {
		t.Fatal(err)
	}
	orders := testenv.HBaseSchema(t, "../examples/orders.yaml")
	rows := 0
	for _, p := range []*schema.Plan{p, orders} {
		_, r := readHistory(t, p, 20261207, now, crashed, true)
		rows += r
	}
	if rows == 0 {
		t.Fatal("no read returned a row")
	}
}
