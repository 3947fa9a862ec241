package doctor

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

func seedFiles(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile("testdata/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// The parsers read whatever a cluster or a user hands them: they must never
// panic, and a parsed /jmx snapshot must be safe to diagnose.
func FuzzParseJMX(f *testing.F) {
	seedFiles(f, "jmx_Regions.json", "jmx_IPC.json", "live_latencies_after.json")
	f.Add([]byte(`{"beans":[{"name":"Hadoop:service=HBase,name=RegionServer,sub=Regions","Namespace_a_table_b_region_0_metric_c":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseJMX(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		Diagnose(Input{Samples: []Sample{{After: s}, {Before: s, After: s}}}, Options{})
	})
}

func FuzzParseSlowLog(f *testing.F) {
	seedFiles(f, "slowlog.json", "responsetooslow.log", "slowlog_live.json", "responsetoo_live.log")
	f.Fuzz(func(t *testing.T, data []byte) {
		calls, err := ParseSlowLog(bytes.NewReader(data))
		if err != nil {
			// Refused input is refused with a message that says why,
			// never with records as well.
			if calls != nil || !strings.HasPrefix(err.Error(), "slow log") {
				t.Fatalf("ParseSlowLog: %d calls and error %v", len(calls), err)
			}
			return
		}
		Diagnose(Input{Slow: calls}, Options{MinUnbatched: 1})
	})
}

func FuzzParseClientLog(f *testing.F) {
	seedFiles(f, "client.log", "client_live.log", "regionserver_live.log", "client_callqueue_live.log")
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := ParseClientLog(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("a bytes reader cannot fail: %v", err)
		}
		// The block search with its literals finds exactly what every
		// expression on every line finds.
		if want := naiveClientLog(data); !slices.Equal(evs, want) {
			t.Fatalf("ScanClientLog found %+v\nline by line: %+v", evs, want)
		}
		Diagnose(Input{Logs: evs}, Options{})
	})
}

// naiveClientLog is the reference: each line under the limit against each
// expression, with no literal search first.
func naiveClientLog(data []byte) []LogEvent {
	var out []LogEvent
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if len(line) >= MaxLogLine || line == "" {
			continue
		}
		for _, sig := range logSignatures {
			if sig.re.MatchString(line) {
				ev, _ := matchLogLineWith(line, sig)
				ev.Line = i + 1
				out = append(out, ev)
				break
			}
		}
	}
	return out
}
