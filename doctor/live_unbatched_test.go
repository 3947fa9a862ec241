package doctor

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// TestLiveUnbatchedPuts writes 300 rows into one table a row per call and
// 300 into another in batches of 100. The region server counts the first
// table's writes as single puts, the second's as batch calls, and the
// doctor must flag only the first. The rate threshold is lowered to one a
// second: how fast a loaded test machine writes is not what is tested.
func TestLiveUnbatchedPuts(t *testing.T) {
	l := openLive(t, 3*time.Minute)
	single := l.table(t, "doctor_single", "f")
	batched := l.table(t, "doctor_batched", "f")
	client := &http.Client{Timeout: 30 * time.Second}
	before, err := FetchJMX(l.ctx, client, l.jmx)
	if err != nil {
		t.Fatal(err)
	}
	capture := os.Getenv("DOCTOR_CAPTURE")
	if capture != "" {
		saveBean(t, client, l.jmx, "TableLatencies", filepath.Join(capture, "live_latencies_before.json"))
	}
	start := time.Now()
	const rows = 300
	var batch []store.RowMutation
	for i := 0; i < rows; i++ {
		m := store.RowMutation{Row: []byte(fmt.Sprintf("r%05d", i)),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}}
		if err := l.st.Mutate(l.ctx, single, m); err != nil {
			t.Fatal(err)
		}
		batch = append(batch, m)
		if len(batch) == 100 {
			l.batch(t, batched, batch)
			batch = nil
		}
	}
	rep := l.diagnoseUntil(t, client, before, start, Options{UnbatchedRate: 1}, "puts-unbatched on "+single, func(rep Report) bool { return rep.Has("puts-unbatched", single) })
	if capture != "" {
		saveBean(t, client, l.jmx, "TableLatencies", filepath.Join(capture, "live_latencies_after.json"))
		t.Logf("captured %s after %s", single, time.Since(start))
	}
	for _, f := range rep.Findings {
		if f.Table == single || f.Table == batched {
			t.Logf("%s %v", f, f.Evidence)
		}
		if f.Table == batched {
			t.Errorf("the batched table was flagged: %s", f)
		}
	}
}
