package live

import (
	"bytes"
	"testing"
)

// FuzzAnalyzeKeys: row keys are outside input; whatever bytes a table
// holds, the analysis returns without panicking and with counts that agree.
func FuzzAnalyzeKeys(f *testing.F) {
	f.Add([]byte("1761955200000#dev1\n1761955201000#dev2\n1761955202000#dev3"))
	f.Add([]byte("OPEN#o1\nPAID#o2\nOPEN#o3"))
	f.Add([]byte("\x00a\n\x01b\n\x02c"))
	f.Add([]byte("\x80\x00\x01\x9a\x00\x00\x00\x00\n\x80\x00\x01\x9b\x00\x00\x00\x00"))
	f.Add([]byte("\n\n#\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys := bytes.Split(data, []byte("\n"))
		l := AnalyzeKeys(keys)
		if l.Sampled != len(keys) || l.Distinct > len(keys) || len(l.Top) > 8 {
			t.Fatalf("inconsistent lead %+v for %d keys", l, len(keys))
		}
		if l.Time != "" && l.Newest.Before(l.Oldest) {
			t.Fatalf("time range backwards: %+v", l)
		}
	})
}
