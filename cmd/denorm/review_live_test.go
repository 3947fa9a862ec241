package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
