package doctor

import (
	"os"
	"strings"
	"testing"
)

func parseSlowFile(t *testing.T, name string) []SlowCall {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, err := ParseSlowLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

const (
	liveGetTable  = "doctor_exp_1796020700852394051"
	liveScanTable = "doctor_exp_1796020722176612611"
	liveScanEnc   = "a0c3dee65ee6ba85cfb8a312228a4904"
)

// The region server log of the test environment's HBase 2.5.8: numbers
// over 32 bits are JSON strings, Multi counts are "multi.gets" keys, and a
// Scan call that continues a scanner names its table only in scandetails.
func TestParseSlowLogCapturedLines(t *testing.T) {
	calls := parseSlowFile(t, "responsetoo_live.log")
	if len(calls) != 5 {
		t.Fatalf("got %d calls, want 5: %+v", len(calls), calls)
	}
	want := []struct {
		line     int
		method   string
		table    string
		tooLarge bool
	}{
		{2, "Get", liveGetTable, true},
		{3, "Scan", liveScanTable, true},
		{4, "Multi", liveScanTable, true},
		{6, "Scan", liveScanTable, false},
		{7, "Scan", liveScanTable, false},
	}
	for i, w := range want {
		c := calls[i]
		if c.Line != w.line || c.Method != w.method || c.Table != w.table || c.TooLarge != w.tooLarge {
			t.Errorf("call %d = %+v, want %+v", i, c, w)
		}
	}
	if c := calls[0]; c.ResponseSize != 3891264 || c.Region != "f54364663db8e410cc43b4d93a6b1bee" || c.Client != "127.0.0.1:39474" {
		t.Errorf("get = %+v", c)
	}
	if c := calls[2]; c.MultiGets != 2 || c.MultiMuts != 0 {
		t.Errorf("multi = %+v", c)
	}
	if c := calls[4]; c.ProcessingMs != 33005 || c.Region != liveScanEnc || !strings.HasPrefix(c.Param, "scanner_id:") {
		t.Errorf("scanner continuation = %+v", c)
	}
}

// Records read from the ring buffer through Thrift2's getSlowLogResponses,
// saved as store/hbase.SlowLogRecord JSON.
func TestParseSlowLogCapturedRecords(t *testing.T) {
	calls := parseSlowFile(t, "slowlog_live.json")
	if len(calls) != 5 {
		t.Fatalf("got %d records, want 5", len(calls))
	}
	if c := calls[0]; c.Method != "Scan" || c.ProcessingMs != 33006 || c.Table != "" || c.TooLarge || c.Server != "localhost:16120" {
		t.Errorf("continued scan = %+v", c)
	}
	if c := calls[1]; c.Table != liveScanTable || c.Region != liveScanEnc || c.ProcessingMs != 32094 {
		t.Errorf("slow scan = %+v", c)
	}
	if c := calls[2]; c.Method != "Multi" || c.MultiGets != 2 || !c.TooLarge {
		t.Errorf("multi = %+v", c)
	}
	if c := calls[3]; c.Method != "Scan" || c.ResponseSize != 3584057 || !c.TooLarge || c.Table != liveScanTable {
		t.Errorf("large scan = %+v", c)
	}
	rep := Diagnose(Input{Slow: calls, SlowSource: "slowlog_live.json"}, Options{})
	if !rep.Has("scan-unbounded", liveScanTable) {
		t.Errorf("no scan-unbounded on %s: %v", liveScanTable, rep.Findings)
	}
	for _, f := range rep.Findings {
		if f.Table == liveGetTable {
			t.Errorf("a large Get was reported: %s", f)
		}
	}
}

// A call both slow and large carries a combined tag (HBase's RpcServer
// writes "TooLarge & TooSlow"); none was captured, since it takes a call
// that is both at once.
func TestParseSlowLogCombinedTag(t *testing.T) {
	line := `2026-11-30 06:38:42,948 WARN  [handler=1] ipc.RpcServer: (responseTooLarge & TooSlow): {"method":"Scan","responsesize":"9000000","processingtimems":7000,"scandetails":"table: ns:t region: ns:t,,1.0123456789abcdef0123456789abcdef."}` + "\n"
	calls, err := ParseSlowLog(strings.NewReader(line))
	if err != nil || len(calls) != 1 {
		t.Fatalf("calls=%v err=%v", calls, err)
	}
	if c := calls[0]; !c.TooLarge || c.ProcessingMs != 7000 || c.Table != "ns:t" || c.Region != "0123456789abcdef0123456789abcdef" {
		t.Errorf("call = %+v", c)
	}
}
