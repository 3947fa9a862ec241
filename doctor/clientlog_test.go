package doctor

import (
	"strings"
	"testing"
)

// client_live.log is what a Java client (hbase-client 2.5.8, two retries)
// logged against the test environment's HBase: an 11 MB cell, a scanner
// left idle past its 60 s lease, batched and buffered puts to a disabled
// table, a put to a missing table, batches into a table whose tiny
// memstore blocks writes (no retries), and a Get of a 1.5 MB row from a
// table whose own hbase.table.max.rowsize is 1 MB.
func TestParseClientLogCaptured(t *testing.T) {
	evs := parseFile(t, "testdata/client_live.log", ParseClientLog)
	var got []string
	for _, e := range evs {
		got = append(got, e.Rule)
	}
	want := []string{"cell-huge", "scanner-lease-expired", "scanner-lease-expired", "retries-exhausted",
		"retries-exhausted", "memstore-blocking", "memstore-blocking", "memstore-blocking", "row-unbounded", "row-unbounded"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("rules:\n got %v\nwant %v", got, want)
	}
	const server = "localhost,16120,1796020609684"
	if e := evs[3]; e.Server != server || e.Line != 97 {
		t.Errorf("retries exhausted = %+v", e)
	}
	if e := evs[5]; e.Server != server || e.Region != "2db748bb556bbaf1e9125f97d2b8f1da" {
		t.Errorf("region too busy = %+v", e)
	}
	if e := evs[8]; e.Region != "2a4d1d5a37ddf52811b99d9df449a1f4" || e.Line != 243 {
		t.Errorf("row too big = %+v", e)
	}
	rep := Diagnose(Input{Logs: evs, LogSource: "client_live.log"}, Options{})
	for _, rule := range []string{"row-unbounded", "cell-huge", "scanner-lease-expired", "retries-exhausted", "memstore-blocking"} {
		if !rep.Has(rule, "") {
			t.Errorf("no %s finding: %v", rule, rep.Findings)
		}
	}
	// The TableNotEnabledException and TableNotFoundException of the same
	// run name no anti-pattern.
	for _, e := range evs {
		if strings.Contains(e.Text, "TableNotFoundException") || strings.Contains(e.Text, "TableNotEnabledException") {
			t.Errorf("matched %q", e.Text)
		}
	}
}
