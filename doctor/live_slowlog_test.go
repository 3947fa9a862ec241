package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/hbase"
)

// TestLiveSlowLogLargeScan scans one cell larger than the region server's
// hbase.ipc.warn.response.size, reads the server's slow log back through
// Thrift2 and expects scan-unbounded on the table. Response size, unlike
// time, does not depend on how busy the machine is: a scan call returns
// whole cells, so the cell alone takes the response over the limit.
func TestLiveSlowLogLargeScan(t *testing.T) {
	url := testenv.HBaseURL(t)
	jmx := testenv.HBaseJMX(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 30 * time.Second}
	conf, err := serverConf(ctx, client, jmx)
	if err != nil {
		t.Fatal(err)
	}
	// An HBase started before testenv/hbase.sh enabled the ring buffer (one
	// that other tests still share) has nothing to read: that is the
	// environment, not a fault of the doctor.
	if conf["hbase.regionserver.slowlog.buffer.enabled"] != "true" {
		t.Skip("the test HBase keeps no online slow log (hbase.regionserver.slowlog.buffer.enabled); restart it with testenv/hbase.sh")
	}
	limit, err := strconv.Atoi(conf["hbase.ipc.warn.response.size"])
	// Cells stay below hbase.client.keyvalue.maxsize (10 MiB).
	if err != nil || limit <= 0 || limit > 8<<20 {
		t.Skipf("hbase.ipc.warn.response.size is %q: no cell can exceed it", conf["hbase.ipc.warn.response.size"])
	}

	raw, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	st, ok := raw.(*hbase.Store)
	if !ok {
		t.Fatalf("%s opened a %T, not the HBase store", url, raw)
	}
	table := fmt.Sprintf("doctor_slow_%d", time.Now().UnixNano())
	if err := st.CreateTable(ctx, store.TableSpec{Name: table, Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.DropTable(context.Background(), table); err != nil {
			t.Errorf("drop %s: %v", table, err)
		}
	})
	// A quarter over the limit: far from it, yet well under the cell cap.
	value := bytes.Repeat([]byte("x"), limit+limit/4)
	put := store.RowMutation{Row: []byte("big"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: value}}}
	if err := st.Mutate(ctx, table, put); err != nil {
		t.Fatal(err)
	}
	sc, err := st.Scan(ctx, table, store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for sc.Next(ctx) {
		n++
	}
	if err := sc.Err(); err != nil || n != 1 {
		t.Fatalf("scan: %d rows, %v", n, err)
	}
	sc.Close()

	// The server hands records to its ring buffer asynchronously; other
	// tests' calls share the buffer, so look for this table's.
	var rep Report
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		recs, err := st.SlowLog(ctx, true, 256)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(recs)
		if err != nil {
			t.Fatal(err)
		}
		calls, err := ParseSlowLog(bytes.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		rep = Diagnose(Input{Slow: calls, SlowSource: url}, Options{})
		if rep.Has("scan-unbounded", table) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scan-unbounded on %s after a minute; %d large-response records: %v", table, len(recs), rep.Findings)
		}
	}
	for _, f := range rep.Findings {
		if f.Table == table {
			t.Logf("%s %v", f, f.Evidence)
		}
	}
}

// serverConf reads the region server's effective configuration from the
// /conf page beside its /jmx.
func serverConf(ctx context.Context, client *http.Client, jmx string) (map[string]string, error) {
	u := strings.TrimSuffix(strings.TrimSuffix(jmx, "/"), "/jmx") + "/conf?format=json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var doc struct {
		Properties []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"properties"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	conf := map[string]string{}
	for _, p := range doc.Properties {
		conf[p.Key] = p.Value
	}
	return conf, nil
}
