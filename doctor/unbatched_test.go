package doctor

import (
	"strings"
	"testing"
	"time"
)

// The TableLatencies beans TestLiveUnbatchedPuts saved (DOCTOR_CAPTURE)
// around 300 single puts into one table and three batches of 100 into
// another, 3.8 s apart. The tables were new: a table's counts appear only
// after its first operation, so the first bean does not list them.
func TestCapturedUnbatchedPuts(t *testing.T) {
	before := readJMX(t, "live_latencies_before.json")
	after := readJMX(t, "live_latencies_after.json")
	const single, batched = "doctor_single_1796022244028252631", "doctor_batched_1796022244028252631"
	if len(before.Tables) != 0 || after.Tables[single]["putTime_num_ops"] != 300 || after.Tables[batched]["putBatchTime_num_ops"] != 3 {
		t.Fatalf("parsed before %v, after %v", before.Tables, after.Tables)
	}
	if _, ok := after.Tables[single]["putTime_mean"]; ok {
		t.Error("latency statistics other than counts were kept")
	}
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: 3800 * time.Millisecond}}}, Options{})
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != "puts-unbatched" || rep.Findings[0].Table != single ||
		!strings.Contains(rep.Findings[0].Message, "300 single-row writes") {
		t.Fatalf("findings = %v", rep.Findings)
	}
	// A slow trickle is not a problem, and a saved file has no rate.
	if rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: time.Minute}}}, Options{}); rep.Has("puts-unbatched", "") {
		t.Errorf("5 writes a second flagged: %v", rep.Findings)
	}
	if rep := Diagnose(Input{Samples: []Sample{{After: after}}}, Options{}); rep.Has("puts-unbatched", "") {
		t.Errorf("a single sample flagged: %v", rep.Findings)
	}
}
