package doctor

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// TestLiveWideTableSkipWAL writes to a three-family table with the WAL
// skipped: the real region server must show three stores per region
// (family-count) and a growing mutationsWithoutWALCount (wal-skipped).
func TestLiveWideTableSkipWAL(t *testing.T) {
	l := openLive(t, 2*time.Minute)
	fams := []string{"a", "b", "c"}
	table := l.table(t, "doctor_wide", fams...)
	client := &http.Client{Timeout: 30 * time.Second}
	before, err := FetchJMX(l.ctx, client, l.jmx)
	if err != nil {
		t.Fatal(err)
	}
	capture := os.Getenv("DOCTOR_CAPTURE")
	if capture != "" {
		saveBean(t, client, l.jmx, "Server", filepath.Join(capture, "live_server_before.json"))
	}
	start := time.Now()
	var batch []store.RowMutation
	for i := 0; i < 200; i++ {
		m := store.RowMutation{Row: []byte(fmt.Sprintf("r%05d", i)), Durability: store.SkipWAL}
		for _, f := range fams {
			m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: f, Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")})
		}
		batch = append(batch, m)
	}
	l.batch(t, table, batch)
	rep := l.diagnoseUntil(t, client, before, start, Options{}, "family-count and wal-skipped on "+table, func(rep Report) bool { return rep.Has("family-count", table) && rep.Has("wal-skipped", "") })
	if capture != "" {
		saveBean(t, client, l.jmx, "Server", filepath.Join(capture, "live_server_after.json"))
		saveBean(t, client, l.jmx, "Regions", filepath.Join(capture, "live_wide_regions.json"))
	}
	for _, f := range rep.Findings {
		t.Logf("%s %v", f, f.Evidence)
	}
}

func saveBean(t *testing.T, client *http.Client, jmx, sub, path string) {
	t.Helper()
	resp, err := client.Get(jmx + "?qry=Hadoop:service=HBase,name=RegionServer,sub=" + sub)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
