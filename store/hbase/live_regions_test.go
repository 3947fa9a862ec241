package hbase

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/denorm/denorm/internal/testenv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// TestRegionIDsAreJMXNames checks against a real region server that the
// region ids Regions derives are the encoded names /jmx keys its counters
// by, which is what lets another tool join the two.
func TestRegionIDsAreJMXNames(t *testing.T) {
	s := openLive(t, liveURL(t))
	jmx := testenv.HBaseJMX(t)
	ctx := t.Context()
	table := fmt.Sprintf("hbase_jmx_ids_%d", time.Now().UnixNano())
	spec := store.TableSpec{Name: table, Families: []store.FamilySpec{{Name: "f"}}, SplitKeys: [][]byte{[]byte("g"), []byte("p\x00\xff")}}
	if err := s.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DropTable(context.Background(), table) })
	regions, err := s.Regions(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	if len(regions) != 3 {
		t.Fatalf("%d regions, want 3", len(regions))
	}
	// A region's metrics reach /jmx with the region server's periodic
	// metrics snapshot; a write to each region makes sure it has some.
	for _, r := range regions {
		row := append(append([]byte{}, r.Start...), 'x')
		if err := s.Mutate(ctx, table, store.RowMutation{Row: row, Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		keys, err := jmxRegionKeys(ctx, jmx)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, r := range regions {
			if !strings.Contains(keys, "_table_"+table+"_region_"+r.ID+"_metric_") {
				missing = append(missing, r.ID)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("region ids %v of %s are not in %s", missing, table, jmx)
		}
		time.Sleep(time.Second)
	}
}

// jmxRegionKeys returns every key of the Regions bean, one per line.
func jmxRegionKeys(ctx context.Context, jmx string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jmx+"?qry=Hadoop:service=HBase,name=RegionServer,sub=Regions", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var doc struct {
		Beans []map[string]any `json:"beans"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return "", fmt.Errorf("decode %s: %w", jmx, err)
	}
	var sb strings.Builder
	for _, b := range doc.Beans {
		for k := range b {
			sb.WriteString(k)
			sb.WriteByte('\n')
		}
	}
	return sb.String(), nil
}
