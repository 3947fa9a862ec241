package live

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/review"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

func TestWriteDescription(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := designs()[0]
	d.fill(ctx, t, st, "tl")
	obs, err := Inspect(ctx, st, "tl", Options{Sample: 100})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDescription(&buf, obs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"table tl: 1 family, 3 regions, 100 sampled keys", "family d: versions 1", "region 2 [1761000000000, 1764000000000): 16+ sampled keys", "keys start with epoch milliseconds as decimal text"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("description lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestDesignsOnPebble(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, d := range designs() {
		t.Run(d.name, func(t *testing.T) {
			d.fill(ctx, t, st, d.name)
			obs := checkDesign(ctx, t, st, d, d.name)
			checkDraft(t, obs, Review(obs))
		})
	}
}

// checkDraft: the draft loads as a schema, and reviewing it finds the key
// and family rules the live review found.
func checkDraft(t *testing.T, obs *Observation, live review.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteDraft(&buf, obs); err != nil {
		t.Fatal(err)
	}
	p, err := schema.Parse(obs.Table+".draft.yaml", buf.Bytes())
	if err != nil {
		t.Fatalf("draft does not load: %v\n%s", err, buf.String())
	}
	// A key the draft describes as delimited text reads every sampled key;
	// epoch milliseconds come back as a timestamp.
	if obs.Table == "time_led" && p.Entities[0].Field("ts") == nil {
		t.Errorf("the draft of a key led by epoch milliseconds has no ts timestamp:\n%s", buf.String())
	}
	if k := p.Tables[0].Key; k.Part(0).Func == rowkey.Text {
		for _, key := range obs.Keys {
			if _, err := k.Decode(key); err != nil {
				t.Errorf("the draft's key %s does not read %q: %v", k, key, err)
				break
			}
		}
	} else if obs.Table == "time_led" || obs.Table == "status_led" {
		t.Errorf("%s has delimited text keys; the draft's key is %s", obs.Table, k)
	}
	rep := review.Review(p)
	for _, id := range []string{"key-monotonic", "index-hot-prefix", "family-count"} {
		if live.Has(id) && !rep.Has(id) {
			t.Errorf("the live review found %s, the draft's review does not:\n%s\n%v", id, buf.String(), rep.Findings)
		}
		if !live.Has(id) && rep.Has(id) {
			t.Errorf("the draft's review finds %s, the live review did not:\n%s", id, buf.String())
		}
	}
}

func TestSplitURL(t *testing.T) {
	for in, want := range map[string][2]string{
		"hbase://127.0.0.1:9090/events":    {"hbase://127.0.0.1:9090", "events"},
		"hbase://h:9090/events?timeout=5s": {"hbase://h:9090?timeout=5s", "events"},
		"pebble:///srv/data/orders":        {"pebble:///srv/data", "orders"},
		"pebble://./denorm-data/orders/":   {"pebble://./denorm-data", "orders"},
	} {
		s, tbl, err := SplitURL(in)
		if err != nil || s != want[0] || tbl != want[1] {
			t.Errorf("SplitURL(%q) = %q, %q, %v; want %q, %q", in, s, tbl, err, want[0], want[1])
		}
	}
	for _, bad := range []string{"hbase://h:9090", "hbase://h:9090/", "events", "::"} {
		if _, _, err := SplitURL(bad); err == nil {
			t.Errorf("SplitURL(%q): want an error", bad)
		}
	}
}

// The sample is bounded: a table ten times the sample size is read no
// further than the sample.
func TestInspectIsBounded(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, filepath.Join(t.TempDir(), "db"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := designs()[0]
	d.n = 2000
	d.fill(ctx, t, st, "big")
	obs, err := Inspect(ctx, st, "big", Options{Sample: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Keys) > 200 {
		t.Errorf("kept %d keys with a sample of 200", len(obs.Keys))
	}
	if !strings.Contains(Review(obs).Findings[0].Message, "epoch milliseconds") {
		t.Errorf("want the key read as epoch milliseconds: %v", Review(obs).Findings)
	}
}

// Rows of one prefix in a table split eight ways leave seven regions empty
// in the sample; cells stamped 1, 2, 3 under a TTL (kept visible by
// MIN_VERSIONS) are not clock times.
func TestEmptyRegionsAndVersionTimestamps(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var splits [][]byte
	for _, c := range "bcdefgh" {
		splits = append(splits, []byte{byte(c)})
	}
	spec := store.TableSpec{Name: "t", SplitKeys: splits, Families: []store.FamilySpec{{Name: "d", TTL: 24 * time.Hour, MaxVersions: 1, MinVersions: 1}}}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var ms []store.RowMutation
	for i := range 300 {
		ms = append(ms, store.RowMutation{Row: fmt.Appendf(nil, "a%06d", i*7919%1000003),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("v"), Timestamp: int64(1 + i%5), Value: []byte("x")}}})
	}
	if _, err := st.Batch(ctx, "t", ms); err != nil {
		t.Fatal(err)
	}
	obs, err := Inspect(ctx, st, "t", Options{Sample: 400})
	if err != nil {
		t.Fatal(err)
	}
	rep := Review(obs)
	for _, id := range []string{"region-size", "ttl-with-version-timestamps"} {
		if !rep.Has(id) {
			t.Errorf("want %s, got %v", id, rep.Findings)
		}
	}
	if obs.PerRegion[0] == 0 || obs.PerRegion[1] != 0 {
		t.Errorf("keys per region %v: want all in the first", obs.PerRegion)
	}
}

// A table of very many regions is sampled at every step-th region, so an
// inspection makes a bounded number of scans.
func TestManyRegionsAreSampledBounded(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var splits [][]byte
	for i := 1; i < 600; i++ {
		splits = append(splits, fmt.Appendf(nil, "k%04d", i))
	}
	if err := st.CreateTable(ctx, store.TableSpec{Name: "many", SplitKeys: splits, Families: []store.FamilySpec{{Name: "d"}}}); err != nil {
		t.Fatal(err)
	}
	var ms []store.RowMutation
	for i := range 1200 {
		ms = append(ms, store.RowMutation{Row: fmt.Appendf(nil, "k%04d-%d", i/2, i), Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("v"), Timestamp: 1, Value: []byte("x")}}})
	}
	if _, err := st.Batch(ctx, "many", ms); err != nil {
		t.Fatal(err)
	}
	obs, err := Inspect(ctx, st, "many", Options{Sample: 500})
	if err != nil {
		t.Fatal(err)
	}
	scanned := 0
	for _, n := range obs.PerRegion {
		if n >= 0 {
			scanned++
		}
	}
	if len(obs.Regions) != 600 || scanned > maxRegionScans || scanned < maxRegionScans/2 {
		t.Errorf("%d regions, %d scanned: want at most %d", len(obs.Regions), scanned, maxRegionScans)
	}
	if len(obs.Keys) > 500 {
		t.Errorf("%d keys kept with a sample of 500", len(obs.Keys))
	}
	if Review(obs).Has("region-size") {
		t.Errorf("every region holds keys, yet region-size fired: %v", Review(obs).Findings)
	}
}
