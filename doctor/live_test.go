package doctor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase"
)

// TestLiveHotRegion drives two workloads into the test environment's HBase,
// each into a table pre-split in four: increasing keys (every row lands in
// the last region) and hashed keys (rows spread evenly). The doctor must
// flag the first from the live /jmx counters and leave the second alone.
func TestLiveHotRegion(t *testing.T) {
	url := testenv.HBaseURL(t)
	jmx := testenv.HBaseJMX(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: the tables are dropped before the
	// store closes (a deferred Close would run before any cleanup).
	t.Cleanup(func() { _ = st.Close() })

	stamp := time.Now().UnixNano()
	hot := fmt.Sprintf("doctor_hot_%d", stamp)
	spread := fmt.Sprintf("doctor_spread_%d", stamp)
	// The increasing keys t9000000000.. sort after every split point.
	hotSplits := [][]byte{[]byte("t1"), []byte("t3"), []byte("t5")}
	spreadSplits := [][]byte{[]byte("4"), []byte("8"), []byte("c")}
	for _, spec := range []store.TableSpec{
		{Name: hot, Families: []store.FamilySpec{{Name: "f"}}, SplitKeys: hotSplits},
		{Name: spread, Families: []store.FamilySpec{{Name: "f"}}, SplitKeys: spreadSplits},
	} {
		if err := st.CreateTable(ctx, spec); err != nil {
			t.Fatal(err)
		}
		name := spec.Name
		t.Cleanup(func() {
			if err := st.DropTable(context.Background(), name); err != nil {
				t.Errorf("drop %s: %v", name, err)
			}
		})
	}
	order := map[string][]string{}
	for _, table := range []string{hot, spread} {
		regions, err := st.Regions(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		if len(regions) != 4 {
			t.Fatalf("%s has %d regions, want 4", table, len(regions))
		}
		for _, r := range regions {
			order[table] = append(order[table], r.ID)
		}
	}

	client := &http.Client{Timeout: 30 * time.Second}
	before, err := FetchJMX(ctx, client, jmx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const rows = 2000
	var hotBatch, spreadBatch []store.RowMutation
	for i := 0; i < rows; i++ {
		put := []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}
		seq := fmt.Sprintf("t%010d", 9000000000+i)
		sum := sha256.Sum256([]byte(seq))
		hotBatch = append(hotBatch, store.RowMutation{Row: []byte(seq), Mutations: put})
		spreadBatch = append(spreadBatch, store.RowMutation{Row: []byte(hex.EncodeToString(sum[:8]) + seq), Mutations: put})
		if len(hotBatch) == 100 || i == rows-1 {
			for table, b := range map[string][]store.RowMutation{hot: hotBatch, spread: spreadBatch} {
				errs, err := st.Batch(ctx, table, b)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range errs {
					if e != nil {
						t.Fatal(e)
					}
				}
			}
			hotBatch, spreadBatch = nil, nil
		}
	}

	// Region metrics reach /jmx with the server's periodic snapshot
	// (hbase.regionserver.metrics.period, 5 s by default): sample until
	// both tables show all their writes, or give up after a minute.
	var after *Snapshot
	for deadline := time.Now().Add(time.Minute); ; {
		after, err = FetchJMX(ctx, client, jmx)
		if err != nil {
			t.Fatal(err)
		}
		if writesSeen(before, after, hot) >= rows && writesSeen(before, after, spread) >= rows {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/jmx shows %v writes to %s and %v to %s, want %d each",
				writesSeen(before, after, hot), hot, writesSeen(before, after, spread), spread, rows)
		}
		time.Sleep(time.Second)
	}
	if dir := os.Getenv("DOCTOR_CAPTURE"); dir != "" {
		capture(t, client, jmx, dir, order)
	}
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: time.Since(start)}}, RegionOrder: order}, Options{})
	for _, f := range rep.Findings {
		t.Logf("%s %v", f, f.Evidence)
	}
	if !rep.Has("region-hot", hot) || !rep.Has("key-monotonic", hot) {
		t.Errorf("the increasing-key table %s was not flagged", hot)
	}
	for _, f := range rep.Findings {
		if f.Table == spread {
			t.Errorf("the hashed-key table was flagged: %s", f)
		}
	}
}

func writesSeen(before, after *Snapshot, table string) float64 {
	var n float64
	for enc, r := range after.Regions {
		if r.FullTable() != table {
			continue
		}
		var b map[string]float64
		if br := before.Regions[enc]; br != nil {
			b = br.Metrics
		} else {
			b = map[string]float64{}
		}
		n += counter(b, r.Metrics, "writeRequestCount")
	}
	return n
}

// capture saves the live Regions bean and the tables' region order as test
// data (DOCTOR_CAPTURE=testdata refreshes doctor/testdata/live_*.json).
func capture(t *testing.T, client *http.Client, jmx, dir string, order map[string][]string) {
	resp, err := client.Get(jmx + "?qry=Hadoop:service=HBase,name=RegionServer,sub=Regions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "live_regions_after.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	o, _ := json.MarshalIndent(order, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "live_region_order.json"), o, 0o644); err != nil {
		t.Fatal(err)
	}
}
