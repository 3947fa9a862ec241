package doctor

import (
	"path/filepath"
	"strings"
	"testing"
)

func readJMX(t *testing.T, names ...string) *Snapshot {
	t.Helper()
	snap := newSnapshot("testdata")
	for _, n := range names {
		s, err := ReadJMXFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		snap.merge(s)
	}
	return snap
}

func TestParseRealRegionsBean(t *testing.T) {
	s := readJMX(t, "jmx_Regions.json")
	meta := s.Regions["1588230740"]
	if meta == nil {
		t.Fatalf("meta region missing; got %v", keys(s.Regions))
	}
	if meta.Namespace != "hbase" || meta.Table != "meta" || meta.FullTable() != "hbase:meta" {
		t.Errorf("meta parsed as %q %q", meta.Namespace, meta.Table)
	}
	if meta.Metrics["storeCount"] != 3 {
		t.Errorf("meta storeCount = %v, want 3", meta.Metrics["storeCount"])
	}
	// Store-level keys must not leak into the region's own metrics.
	if len(meta.Stores) != 3 || meta.Stores["info"] == nil {
		t.Errorf("meta stores = %v", meta.Stores)
	}
	ns := s.Regions["e7e9897f55ca420cc32dd5b82d63a388"]
	if ns == nil || ns.Table != "namespace" {
		t.Fatalf("namespace region missing or wrong: %+v", ns)
	}
	if _, ok := ns.Metrics["writeRequestCount"]; !ok {
		t.Error("writeRequestCount missing")
	}
}

func TestParseRealServerIPCTables(t *testing.T) {
	s := readJMX(t, "jmx_Server.json", "jmx_IPC.json", "jmx_Tables.json")
	if !strings.HasPrefix(s.Server, "localhost,16020,") {
		t.Errorf("server = %q, want the tag.serverName", s.Server)
	}
	if _, ok := s.ServerMetrics["mutationsWithoutWALCount"]; !ok {
		t.Error("mutationsWithoutWALCount missing")
	}
	if _, ok := s.IPC["exceptions.UnknownScannerException"]; !ok {
		t.Error("IPC exceptions missing")
	}
	// Table names with underscores keep them.
	m := s.Tables["st_DropTable_ad8f19ec"]
	if m == nil {
		t.Fatalf("tables = %v", keys(s.Tables))
	}
	if _, ok := m["writeRequestCount"]; !ok {
		t.Error("table writeRequestCount missing")
	}
}

func TestParseJMXTolerant(t *testing.T) {
	doc := `{"beans":[
	  {"name":"java.lang:type=Memory","HeapMemoryUsage":{"used":1}},
	  {"name":"Hadoop:service=HBase,name=RegionServer,sub=Regions",
	   "Namespace_default_table_my_table_region_0123456789abcdef0123456789abcdef_metric_writeRequestCount": 7,
	   "Namespace_default_table_my_table_region_0123456789abcdef0123456789abcdef_metric_newMetric": "12",
	   "Namespace_default_table_my_table_region_0123456789abcdef0123456789abcdef_metric_weird": {"a":1},
	   "odd key": 1, "tag.Hostname": "rs1"},
	  {"name":"Hadoop:service=HBase,name=RegionServer,sub=Future","x":1}
	]}`
	s, err := ParseJMX(strings.NewReader(doc), "inline")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Regions["0123456789abcdef0123456789abcdef"]
	if r == nil || r.Table != "my_table" || r.Metrics["writeRequestCount"] != 7 || r.Metrics["newMetric"] != 12 {
		t.Fatalf("region = %+v", r)
	}
	if _, ok := r.Metrics["weird"]; ok {
		t.Error("a non-numeric metric was kept")
	}
	if s.Server != "rs1" {
		t.Errorf("server = %q", s.Server)
	}
	if _, err := ParseJMX(strings.NewReader("<html>not json"), "x"); err == nil {
		t.Error("a non-JSON document parsed")
	}
}

func TestParseSlowLogShellJSON(t *testing.T) {
	calls := parseFile(t, "testdata/slowlog.json", ParseSlowLog)
	if len(calls) != 3 {
		t.Fatalf("got %d calls, want 3", len(calls))
	}
	c := calls[0]
	if c.Method != "Scan" || c.ProcessingMs != 12500 || c.ResponseSize != 104857600 || c.Table != "orders" ||
		c.Region != "0123456789abcdef0123456789abcdef" || c.Client != "10.0.0.5:51234" {
		t.Errorf("scan record = %+v", c)
	}
	if calls[1].MultiMuts != 500 {
		t.Errorf("multi record = %+v", calls[1])
	}
	if calls[2].Method != "Get" || calls[2].ProcessingMs != 0 {
		t.Errorf("odd record = %+v", calls[2])
	}
}

func TestParseSlowLogResponseTooSlowLines(t *testing.T) {
	calls := parseFile(t, "testdata/responsetooslow.log", ParseSlowLog)
	if len(calls) != 2 {
		t.Fatalf("got %d calls, want 2 (the truncated line and the info line are skipped): %+v", len(calls), calls)
	}
	if c := calls[0]; c.Method != "Scan" || c.ProcessingMs != 15000 || c.Line != 1 || c.Table != "orders" || c.TooLarge {
		t.Errorf("first = %+v", c)
	}
	if c := calls[1]; !c.TooLarge || c.ResponseSize != 209715200 || c.Line != 2 {
		t.Errorf("second = %+v", c)
	}
}

func TestParseClientLog(t *testing.T) {
	evs := parseFile(t, "testdata/client.log", ParseClientLog)
	var got []string
	for _, e := range evs {
		got = append(got, e.Rule)
	}
	want := []string{"row-unbounded", "scanner-lease-expired", "scanner-lease-expired", "scanner-lease-expired",
		"retries-exhausted", "memstore-blocking", "call-queue-full", "cell-huge", "store-files-blocking", "memstore-blocking"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("rules:\n got %v\nwant %v", got, want)
	}
	if evs[5].Region != "0123456789abcdef0123456789abcdef" || evs[5].Server != "rs1.example,16020,1700000000000" {
		t.Errorf("region too busy = %+v", evs[5])
	}
	if evs[4].Server != "rs1.example:16020" {
		t.Errorf("retries exhausted server = %q", evs[4].Server)
	}
	if evs[8].Region != "fedcba9876543210fedcba9876543210" {
		t.Errorf("store files region = %q", evs[8].Region)
	}
	if evs[0].Line != 2 {
		t.Errorf("line = %d, want 2", evs[0].Line)
	}
}

func TestParseClientLogLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20) + " RowTooBigException\n"
	evs, err := ParseClientLog(strings.NewReader(long + "tail without newline"))
	if err != nil || len(evs) != 1 || len(evs[0].Text) > maxLineText+3 {
		t.Fatalf("evs=%d err=%v", len(evs), err)
	}
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }
