package live

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/denorm/denorm/review"
	"github.com/denorm/denorm/store"
)

// design is a table made to show (or not show) what a live review infers.
type design struct {
	name  string
	spec  store.TableSpec
	rows  func(i int) (key []byte, cells map[string][]string)
	n     int
	want  []string // rule ids the review must report
	clean bool     // the review must report nothing
}

var base = time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

func hashLead(id string) []byte {
	h := md5.Sum([]byte(id))
	return h[:2]
}

// designs are the tables of the live tests: each made to show one
// inferable anti-pattern, and one designed well.
func designs() []design {
	statuses := []string{"OPEN", "PAID", "SHIPPED", "CANCELLED"}
	return []design{
		{
			// <epoch_millis>#<device_id>: a clock leads the key.
			name: "time_led",
			spec: store.TableSpec{Families: []store.FamilySpec{{Name: "d"}}, SplitKeys: [][]byte{[]byte("1761000000000"), []byte("1764000000000")}},
			rows: func(i int) ([]byte, map[string][]string) {
				return fmt.Appendf(nil, "%d#dev%05d", base+int64(i)*1000, i%97), map[string][]string{"d": {"v"}}
			},
			n: 400, want: []string{"key-monotonic"},
		},
		{
			// Six families with the same settings.
			name: "six_families",
			spec: store.TableSpec{Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "e"}, {Name: "f"}, {Name: "g"}}},
			rows: func(i int) ([]byte, map[string][]string) {
				id := fmt.Sprintf("u%06d", i)
				return append(hashLead(id), id...), map[string][]string{"a": {"x"}, "b": {"x"}, "c": {"x"}, "e": {"x"}, "f": {"x"}, "g": {"x"}}
			},
			n: 300, want: []string{"family-count"},
		},
		{
			// STATUS#order: four values lead every key.
			name: "status_led",
			spec: store.TableSpec{Families: []store.FamilySpec{{Name: "d"}}},
			rows: func(i int) ([]byte, map[string][]string) {
				return fmt.Appendf(nil, "%s#o%07d", statuses[i%len(statuses)], i*7919%1000003), map[string][]string{"d": {"c"}}
			},
			n: 400, want: []string{"index-hot-prefix"},
		},
		{
			// hash(deviceId, 2), deviceId, reverse(ts), one family with short
			// names, split on the hash: nothing to report.
			name: "well_designed",
			spec: store.TableSpec{Families: []store.FamilySpec{{Name: "d", DataBlockEncoding: "FAST_DIFF"}}, SplitKeys: [][]byte{{0x40}, {0x80}, {0xc0}}},
			rows: func(i int) ([]byte, map[string][]string) {
				dev := fmt.Sprintf("dev%05d", i%200)
				k := append(hashLead(dev), dev...)
				k = append(k, 0x00, 0x01)
				k = binary.BigEndian.AppendUint64(k, uint64(math.MaxInt64-(base+int64(i)*10_000)))
				return k, map[string][]string{"d": {"t", "h"}}
			},
			n: 600, clean: true,
		},
	}
}

// fill creates the design's table under name and writes its rows.
func (d design) fill(ctx context.Context, t testing.TB, st store.Store, name string) {
	t.Helper()
	spec := d.spec
	spec.Name = name
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	var ms []store.RowMutation
	flush := func() {
		errs, err := st.Batch(ctx, name, ms)
		if err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		for _, e := range errs {
			if e != nil {
				t.Fatalf("write %s: %v", name, e)
			}
		}
		ms = ms[:0]
	}
	for i := 0; i < d.n; i++ {
		key, cells := d.rows(i)
		m := store.RowMutation{Row: key}
		for fam, quals := range cells {
			for _, q := range quals {
				m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: fam, Qualifier: []byte(q), Timestamp: base + int64(i), Value: []byte("v")})
			}
		}
		ms = append(ms, m)
		if len(ms) == 200 {
			flush()
		}
	}
	if len(ms) > 0 {
		flush()
	}
}

// checkDesign reviews the table and compares with what the design shows.
func checkDesign(ctx context.Context, t *testing.T, st store.Store, d design, name string) *Observation {
	t.Helper()
	obs, err := Inspect(ctx, st, name, Options{Sample: 500})
	if err != nil {
		t.Fatal(err)
	}
	obs.Source = "test://" + name
	rep := Review(obs)
	for _, f := range rep.Findings {
		t.Logf("%s: %s", d.name, f)
	}
	if d.clean && len(rep.Findings) > 0 {
		t.Errorf("%s: a well-designed table shows findings: %v", d.name, rep.Findings)
	}
	for _, id := range d.want {
		if !rep.Has(id) {
			t.Errorf("%s: want a %s finding, got %v", d.name, id, rep.Findings)
		}
	}
	if len(d.want) > 0 && len(rep.Findings) != len(d.want) {
		t.Errorf("%s: want only %v, got %v", d.name, d.want, rep.Findings)
	}
	for _, f := range rep.Findings {
		if rule, ok := review.Lookup(f.Rule); !ok || !rule.Allows(f.Severity) {
			t.Errorf("%s: %s at %s is not a level docs/rules.md lists", d.name, f.Rule, f.Severity)
		}
		if f.Table != name || f.Fix == "" {
			t.Errorf("%s: finding without table or fix: %+v", d.name, f)
		}
	}
	return obs
}
