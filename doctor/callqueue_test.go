package doctor

import (
	"strings"
	"testing"
)

// A third instance of the test HBase, started with
// DENORM_HBASE_EXTRA_CONF=hbase.ipc.server.max.callqueue.size=1048576,
// turned away a Java client's 2 MB put on each of its three attempts:
// the client logged CallQueueTooBigException under a
// RetriesExhaustedException, and the IPC bean counted three.
func TestCapturedCallQueueFull(t *testing.T) {
	evs := parseFile(t, "testdata/client_callqueue_live.log", ParseClientLog)
	var got []string
	for _, e := range evs {
		got = append(got, e.Rule)
	}
	want := "retries-exhausted call-queue-full call-queue-full call-queue-full call-queue-full call-queue-full"
	if strings.Join(got, " ") != want {
		t.Fatalf("rules:\n got %v\nwant %v", got, want)
	}
	if e := evs[1]; e.Server != "localhost,16220,1796022066542" || e.Line != 4 {
		t.Errorf("call queue full = %+v", e)
	}

	before := readJMX(t, "live_callqueue_ipc_before.json")
	after := readJMX(t, "live_callqueue_ipc_after.json")
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after}}}, Options{})
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != "call-queue-full" ||
		!strings.Contains(strings.Join(rep.Findings[0].Evidence, " "), "exceptions.callQueueTooBig 3") {
		t.Errorf("findings = %v", rep.Findings)
	}
}
