package main

import (
	"encoding/json"
	"fmt"
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
