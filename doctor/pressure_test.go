package doctor

import (
	"strings"
	"testing"
)

// The live_pressure_* beans were saved around a Java client's writes into a
// table whose own settings (a 128 KB memstore with a block multiplier of 2,
// compactions off, no splits) keep the region server blocking writes and
// piling up store files: blockedRequestCount grew by 205 and the region
// held 262 store files. The IPC beans also carry the UnknownScannerException
// of the client's expired scanner (client_live.log), from before the first.
func TestCapturedMemstoreAndStoreFilePressure(t *testing.T) {
	before := readJMX(t, "live_pressure_server_before.json", "live_pressure_ipc_before.json")
	after := readJMX(t, "live_pressure_server_after.json", "live_pressure_ipc_after.json", "live_pressure_regions.json")
	const table, region = "doctor_pressure_1796021173", "01e90c8633da2bd6a7b77640fb11a2d3"
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after}}}, Options{})
	var blocking, files *Finding
	for i, f := range rep.Findings {
		switch f.Rule {
		case "memstore-blocking":
			blocking = &rep.Findings[i]
		case "store-files-blocking":
			files = &rep.Findings[i]
		}
	}
	if blocking == nil || !strings.Contains(strings.Join(blocking.Evidence, " "), "blockedRequestCount 205") {
		t.Errorf("memstore-blocking = %+v", blocking)
	}
	if files == nil || files.Table != table || files.Region != region || !strings.Contains(files.Message, "262 store files") {
		t.Errorf("store-files-blocking = %+v", files)
	}
	// The client's scanner had expired before the first sample: no
	// scanner-lease-expired in the interval, one since the server started.
	if rep.Has("scanner-lease-expired", "") {
		t.Errorf("an expiry from before the interval was reported: %v", rep.Findings)
	}
	// A saved file alone still shows the store files; the counters are
	// then totals since the server started.
	rep = Diagnose(Input{Samples: []Sample{{After: after}}}, Options{})
	for _, rule := range []string{"memstore-blocking", "store-files-blocking", "scanner-lease-expired"} {
		if !rep.Has(rule, "") {
			t.Errorf("one sample: no %s in %v", rule, rep.Findings)
		}
	}
}

// regionserver_live.log holds the region server's own record of a blocked
// write: a WARN line, then the exception with the region and server.
func TestParseRegionServerLogCaptured(t *testing.T) {
	evs := parseFile(t, "testdata/regionserver_live.log", ParseClientLog)
	if len(evs) != 1 || evs[0].Rule != "memstore-blocking" || evs[0].Region != "046c398a78bcd69746af988a64ae1173" ||
		evs[0].Server != "localhost,16120,1796020609684" || evs[0].Line != 4 {
		t.Fatalf("events = %+v", evs)
	}
}
