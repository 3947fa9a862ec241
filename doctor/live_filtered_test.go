package doctor

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// TestLiveReadsFiltered scans 500 rows with a server-side filter that keeps
// none of them, the way a query on fields the row key does not lead with
// reads: the region's filteredReadRequestCount grows by 500, its
// readRequestCount hardly, and the doctor must report reads-filtered.
func TestLiveReadsFiltered(t *testing.T) {
	l := openLive(t, 2*time.Minute)
	ctx, st, hbaseURL, jmx := l.ctx, l.st, l.url, l.jmx
	table := l.table(t, "doctor_filtered", "f")
	var rows []store.RowMutation
	for i := 0; i < 500; i++ {
		rows = append(rows, store.RowMutation{Row: []byte(fmt.Sprintf("order%05d", i)),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("status"), Timestamp: 1, Value: []byte("open")}}})
	}
	errs, err := st.Batch(ctx, table, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		if e != nil {
			t.Fatal(e)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second}
	before, err := FetchJMX(ctx, client, jmx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// store.Scan has no filters; the gateway takes HBase's filter language.
	c, closeConn, err := gateway(hbaseURL)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetScannerResults(ctx, []byte(table), &hbase2.TScan{FilterString: []byte("ValueFilter(=, 'binary:shipped')")}, 1000)
	closeConn()
	if err != nil || len(res) != 0 {
		t.Fatalf("filtered scan: %d rows, %v", len(res), err)
	}
	var rep Report
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		after, err := FetchJMX(ctx, client, jmx)
		if err != nil {
			t.Fatal(err)
		}
		rep = Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: time.Since(start)}}}, Options{})
		if rep.Has("reads-filtered", table) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reads-filtered on %s after a minute: %v", table, rep.Findings)
		}
	}
	for _, f := range rep.Findings {
		if f.Table == table {
			t.Logf("%s %v", f, f.Evidence)
		}
	}
}
