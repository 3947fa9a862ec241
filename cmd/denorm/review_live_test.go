package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// denorm review on a table URL: a time-led table in an embedded store is
// reviewed with no schema file, and --draft writes a schema that loads.
func TestReviewLiveTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	ctx := context.Background()
	st, err := pebble.Open(ctx, dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "clicks", Families: []store.FamilySpec{{Name: "d"}}}); err != nil {
		t.Fatal(err)
	}
	var ms []store.RowMutation
	for i := range 300 {
		ms = append(ms, store.RowMutation{Row: fmt.Appendf(nil, "%d#u%03d", int64(1764547200000)+int64(i)*250, i%40),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("p"), Timestamp: 1764547200000, Value: []byte("/home")}}})
	}
	if _, err := st.Batch(ctx, "clicks", ms); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	draft := filepath.Join(t.TempDir(), "clicks.yaml")
	code, out, errs := runCmd(t, "review", "pebble://"+dir+"/clicks", "--format", "json", "--sample", "100", "--draft", draft)
	if code != exitProblems {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	var rep struct {
		Findings []struct{ Rule, Severity, Table string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != "key-monotonic" || rep.Findings[0].Table != "clicks" {
		t.Errorf("want one key-monotonic finding on clicks, got %+v", rep.Findings)
	}
	if _, err := os.Stat(draft); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Load(draft); err != nil {
		t.Errorf("the draft does not load: %v", err)
	}
	if code, _, _ := runCmd(t, "review", "pebble://"+dir+"/nosuch"); code != exitUsage {
		t.Errorf("missing table: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "review", "pebble://"+dir+"/clicks", "--sample", "0"); code != exitUsage {
		t.Errorf("--sample 0: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "review", "examples.yaml", "--draft", draft); code != exitUsage {
		t.Errorf("--draft with a schema file: exit %d, want 2", code)
	}
}

// denorm review hbase://HOST:9090/TABLE on the test HBase: a table keyed
// STATUS#id shows its few leading values.
func TestReviewLiveHBaseTable(t *testing.T) {
	raw := hbaseURL(t)
	ctx := context.Background()
	st, err := store.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	table := fmt.Sprintf("denorm_live_review_%d", time.Now().UnixNano())
	if err := st.CreateTable(ctx, store.TableSpec{Name: table, Families: []store.FamilySpec{{Name: "d"}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DropTable(context.Background(), table) })
	var ms []store.RowMutation
	for i := range 200 {
		ms = append(ms, store.RowMutation{Row: fmt.Appendf(nil, "%s#o%05d", []string{"OPEN", "PAID", "SHIPPED"}[i%3], i*37%1000),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("c"), Timestamp: 1, Value: []byte("x")}}})
	}
	if _, err := st.Batch(ctx, table, ms); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "review", raw+"/"+table, "--format", "sarif")
	if code != exitOK {
		t.Fatalf("exit %d (a warning only), want 0\n%s%s", code, out, errs)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != 1 || res[0].RuleID != "index-hot-prefix" || res[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != raw+"/"+table {
		t.Errorf("want one index-hot-prefix result located at the table URL, got %+v", res)
	}
}
