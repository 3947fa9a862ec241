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
	table := l.table(t, "doctor_filtered", "f")
	var rows []store.RowMutation
	for i := 0; i < 500; i++ {
		rows = append(rows, store.RowMutation{Row: []byte(fmt.Sprintf("order%05d", i)),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("status"), Timestamp: 1, Value: []byte("open")}}})
	}
	l.batch(t, table, rows)
	client := &http.Client{Timeout: 30 * time.Second}
	before, err := FetchJMX(l.ctx, client, l.jmx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// store.Scan has no filters; the gateway takes HBase's filter language.
	c, closeConn, err := gateway(l.url)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetScannerResults(l.ctx, []byte(table), &hbase2.TScan{FilterString: []byte("ValueFilter(=, 'binary:shipped')")}, 1000)
	closeConn()
	if err != nil || len(res) != 0 {
		t.Fatalf("filtered scan: %d rows, %v", len(res), err)
	}
	rep := l.diagnoseUntil(t, client, before, start, Options{}, "reads-filtered on "+table, func(rep Report) bool { return rep.Has("reads-filtered", table) })
	for _, f := range rep.Findings {
		if f.Table == table {
			t.Logf("%s %v", f, f.Evidence)
		}
	}
}
