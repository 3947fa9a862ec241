package main

import (
	"bytes"
	"context"
	"time"

	"encoding/json"
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/store"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestDoctorFiles(t *testing.T) {
	td := "../../doctor/testdata/"
	code, out, errs := runCmd(t, "doctor", "--jmx", td+"jmx_Regions.json", "--jmx", td+"jmx_IPC.json")
	if code != exitOK || !strings.Contains(out, "scanner-lease-expired") {
		t.Errorf("saved jmx: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd(t, "doctor", "--log", td+"client.log", "--slowlog", td+"slowlog.json", "--format", "json")
	if code != exitProblems {
		t.Errorf("client log with errors: exit %d, want 1\n%s", code, out)
	}
	var doc struct {
		Findings []struct {
			Rule     string   `json:"rule"`
			Evidence []string `json:"evidence"`
		} `json:"findings"`
		Summary struct{ Error int } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Summary.Error == 0 || len(doc.Findings) == 0 {
		t.Errorf("json output: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"doctor"},
		{"doctor", "--jmx", "no-such-file.json"},
		{"doctor", "--log", td + "client.log", "--format", "xml"},
		{"doctor", "--log", td + "client.log", "--interval", "0s"},
	} {
		if code, _, _ := runCmd(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// A fake RegionServer whose one hot region gains 1000 writes per request.
func TestDoctorLiveSamples(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.RawQuery, "sub=Regions") {
			fmt.Fprint(w, `{"beans":[]}`)
			return
		}
		n := calls.Add(1)
		fmt.Fprintf(w, `{"beans":[{"name":"Hadoop:service=HBase,name=RegionServer,sub=Regions",
		 "Namespace_default_table_t_region_%032x_metric_writeRequestCount": %d,
		 "Namespace_default_table_t_region_%032x_metric_writeRequestCount": 5,
		 "Namespace_default_table_t_region_%032x_metric_writeRequestCount": 5}]}`, 1, n*1000, 2, 3)
	}))
	defer srv.Close()
	code, out, errs := runCmd(t, "doctor", "--jmx", srv.URL+"/jmx", "--interval", "50ms")
	if code != exitProblems || !strings.Contains(out, "region-hot") || !strings.Contains(out, "1000 requests") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// TestDoctorLiveHBase runs the command against the test environment's HBase
// while increasing keys pour into a pre-split table: with --store it must
// name the table's last region as the monotonic-key hot spot and exit 1.
func TestDoctorLiveHBase(t *testing.T) {
	url := hbaseURL(t)
	jmx := testenv.HBaseJMX(t)
	ctx := t.Context()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	table := fmt.Sprintf("doctor_cli_%d", time.Now().UnixNano())
	spec := store.TableSpec{Name: table, Families: []store.FamilySpec{{Name: "f"}},
		SplitKeys: [][]byte{[]byte("t1"), []byte("t3"), []byte("t5")}}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.DropTable(context.Background(), table); err != nil {
			t.Errorf("drop %s: %v", table, err)
		}
	})
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(ctx, []string{"--store", url, "doctor", "--jmx", jmx, "--interval", "12s"}, &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	// Increasing keys pour in until the doctor has sampled twice. Writing
	// for the whole interval, not once after a pause, puts writes between
	// the two samples however long the first /jmx request takes on a busy
	// machine: writes made before the first sample, and published with
	// the server's periodic metrics before it, would count in neither's
	// difference (that flaked under load).
	var r result
	for i, finished := 0, false; !finished; {
		var batch []store.RowMutation
		for range 200 {
			batch = append(batch, store.RowMutation{Row: []byte(fmt.Sprintf("t%010d", 9000000000+i)),
				Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}})
			i++
		}
		if _, err := st.Batch(ctx, table, batch); err != nil {
			t.Fatal(err)
		}
		select {
		case r = <-done:
			finished = true
		case <-time.After(250 * time.Millisecond):
		}
	}
	if r.code != exitProblems || !strings.Contains(r.out, "[key-monotonic] the busiest region of "+table) {
		t.Errorf("exit %d\n%s%s", r.code, r.out, r.err)
	}
	// --store names the hot region's rows: the last region, from t5 on.
	if !strings.Contains(r.out, "holds rows [t5, (last))") {
		t.Errorf("the finding does not give the region's key range:\n%s", r.out)
	}
}

// TestDoctorLiveSlowLogURL reads the test HBase's online slow logs through
// its Thrift2 gateway. Whether they hold anything depends on other tests
// (doctor's TestLiveSlowLogLargeScan asserts the finding); here the read
// itself must work and the output must be the stable JSON.
func TestDoctorLiveSlowLogURL(t *testing.T) {
	url := hbaseURL(t)
	code, out, errs := runCmd(t, "doctor", "--slowlog", url, "--format", "json")
	if code != exitOK && code != exitProblems {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var doc struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Findings == nil {
		t.Errorf("json output: %v\n%s", err, out)
	}
	if code, _, _ := runCmd(t, "doctor", "--slowlog", "no-such-slowlog.json"); code != exitUsage {
		t.Errorf("a missing slow-log file: exit %d, want 2", code)
	}
}
