package reconcile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"time"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// A Plan freezes how a run splits its work, so that every part of it, on
// any machine and at any time, cuts the same key ranges: a region split
// between two workers' starts cannot skip or double a range.
//
// Each primary table is cut into Parts key ranges; each derived table of its
// entity (index, lookup, counter) into ranges of about RangeRows rows, range
// j belonging to part j mod Parts. Part i derives the expected copies of the
// primary rows in its primary range and adds their hashes to the expected
// checksum of whatever derived range each copy falls in; it scans its own
// derived ranges into their stored checksums. Merged, a range whose two
// checksums agree is done; only the others are diffed row by row.
type Plan struct {
	Format int `json:"format"`
	// Schema and Store are what the command was given, for the parts and
	// the merge to open the same schema and store.
	Schema       string      `json:"schema,omitempty"`
	SchemaSHA256 string      `json:"schema_sha256,omitempty"`
	Store        string      `json:"store,omitempty"`
	Parts        int         `json:"parts"`
	SinceMs      int64       `json:"since_ms,omitempty"`
	Tables       []PlanTable `json:"tables"`
}

// PlanTable is one primary table and the ranges of its derived tables.
// Splits are the first keys of every range after the first.
type PlanTable struct {
	Primary string       `json:"primary"`
	Splits  [][]byte     `json:"splits"`
	Derived []PlanRanges `json:"derived"`
}

// PlanRanges are the ranges of one derived table.
type PlanRanges struct {
	Table  string   `json:"table"`
	Splits [][]byte `json:"splits"`
}

// planFormat is the version of the plan and partial result files.
const planFormat = 1

// PlanOptions say how to cut the work.
type PlanOptions struct {
	// Parts is the number of parts; at least 1.
	Parts int
	// Table limits the plan to one primary table; "" means every one.
	Table string
	// Since freezes the counter window (Options.Since) for every part.
	Since time.Time
	// Sample is the number of primary rows the plan samples (reservoir
	// over one scan of the primary table) to place range boundaries; 0
	// means 4096.
	Sample int
	// RangeRows is the derived rows a range should hold, about; 0 means
	// 20,000. It bounds the memory of a range's diff.
	RangeRows int
	// Rate caps the rows read per second by the sampling scan; 0: none.
	Rate float64
}

const (
	defaultSample    = 4096
	defaultRangeRows = 20000
)

// NewPlan samples the primary tables of sp in st and cuts their key spaces
// and those of their derived tables into ranges.
func NewPlan(ctx context.Context, sp *schema.Plan, st store.Store, opts PlanOptions) (*Plan, error) {
	if opts.Parts < 1 {
		return nil, fmt.Errorf("reconcile: plan: parts %d: want at least 1", opts.Parts)
	}
	return newPlan(ctx, sp, newMetered(st, opts.Rate), opts, true)
}

// newPlan is NewPlan; without sample, it makes a plan of one part whose
// derived tables have no splits yet, for runPart to cut (cut.go).
func newPlan(ctx context.Context, sp *schema.Plan, ms *metered, opts PlanOptions, sample bool) (*Plan, error) {
	if opts.Sample <= 0 {
		opts.Sample = defaultSample
	}
	if opts.RangeRows <= 0 {
		opts.RangeRows = defaultRangeRows
	}
	p := &Plan{Format: planFormat, Parts: opts.Parts}
	if !opts.Since.IsZero() {
		p.SinceMs = opts.Since.UnixMilli()
	}
	found := false
	for _, ent := range sp.Entities {
		prim := sp.Primary(ent.Name)
		if prim == nil || (opts.Table != "" && prim.Name != opts.Table) {
			continue
		}
		found = true
		if !sample {
			p.Tables = append(p.Tables, bareTable(sp, ent, prim))
			continue
		}
		pt, err := planTable(ctx, sp, ms, ent, prim, opts)
		if err != nil {
			return nil, err
		}
		p.Tables = append(p.Tables, pt)
	}
	if opts.Table != "" && !found {
		return nil, fmt.Errorf("reconcile: %s is not a primary table of the schema", opts.Table)
	}
	return p, nil
}

func planTable(ctx context.Context, sp *schema.Plan, st store.Store, ent *schema.Entity, prim *schema.Table, opts PlanOptions) (PlanTable, error) {
	pt := PlanTable{Primary: prim.Name}
	sample, n, err := reservoir(ctx, st, prim.Name, opts.Sample)
	if err != nil {
		return pt, err
	}
	var pkeys [][]byte
	keys := map[string][][]byte{}
	for _, row := range sample {
		pkeys = append(pkeys, row.Key)
		state, err := layout.ReadState(sp, ent, prim, row)
		if err != nil || !state.Exists() {
			continue // sampling only: the run reports bad rows
		}
		d, err := layout.DeriveCopies(sp, ent, state.Values)
		if err != nil {
			continue
		}
		for _, it := range d.Items {
			keys[it.Table] = append(keys[it.Table], it.Row)
		}
		for _, in := range d.Increments {
			keys[in.Table] = append(keys[in.Table], in.Row)
		}
	}
	pt.Splits = quantiles(pkeys, opts.Parts)
	for _, t := range sp.TablesOf(ent.Name) {
		if t.Role == schema.RolePrimary {
			continue
		}
		ks := keys[t.Name]
		r := opts.Parts
		if len(sample) > 0 {
			est := int64(len(ks)) * n / int64(len(sample))
			r = max(r, int((est+int64(opts.RangeRows)-1)/int64(opts.RangeRows)))
		}
		pt.Derived = append(pt.Derived, PlanRanges{Table: t.Name, Splits: quantiles(ks, r)})
	}
	return pt, nil
}

// bareTable is a primary table of one range and its derived tables, each
// of one range until cut.
func bareTable(sp *schema.Plan, ent *schema.Entity, prim *schema.Table) PlanTable {
	pt := PlanTable{Primary: prim.Name}
	for _, t := range sp.TablesOf(ent.Name) {
		if t.Role != schema.RolePrimary {
			pt.Derived = append(pt.Derived, PlanRanges{Table: t.Name})
		}
	}
	return pt
}

// reservoir samples up to k rows of a table in one scan, and counts them.
func reservoir(ctx context.Context, st store.Store, table string, k int) ([]store.Row, int64, error) {
	sc, err := st.Scan(ctx, table, store.Scan{Caching: 1000})
	if err != nil {
		return nil, 0, fmt.Errorf("reconcile: plan: scan %s: %w", table, err)
	}
	defer sc.Close()
	r := rand.New(rand.NewSource(1)) // reproducible plans
	var out []store.Row
	var n int64
	for sc.Next(ctx) {
		n++
		if len(out) < k {
			out = append(out, copyRow(sc.Row()))
		} else if j := r.Int63n(n); j < int64(k) {
			out[j] = copyRow(sc.Row())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("reconcile: plan: scan %s: %w", table, err)
	}
	return out, n, nil
}

// quantiles picks up to n-1 distinct split keys that cut keys into n
// groups of about equal size.
func quantiles(keys [][]byte, n int) [][]byte {
	s := slices.Clone(keys)
	slices.SortFunc(s, bytes.Compare)
	s = slices.CompactFunc(s, bytes.Equal)
	var out [][]byte
	for i := 1; i < n && len(s) > 0; i++ {
		k := s[i*len(s)/n]
		if len(k) == 0 || (len(out) > 0 && bytes.Compare(k, out[len(out)-1]) <= 0) {
			continue
		}
		out = append(out, bytes.Clone(k))
	}
	return out
}

// rangeOf is the index of the range of splits that holds key.
func rangeOf(splits [][]byte, key []byte) int {
	i, found := slices.BinarySearchFunc(splits, key, bytes.Compare)
	if found {
		return i + 1
	}
	return i
}

// bounds is range i of splits.
func bounds(splits [][]byte, i int) keyRange {
	var r keyRange
	if i > 0 && i <= len(splits) {
		r.Start = splits[i-1]
	}
	if i < len(splits) {
		r.Stop = splits[i]
	}
	return r
}

// primaryPart is part i's range of a primary table; ok is false for a part
// past the table's last range (a small table has fewer ranges than parts).
func (pt *PlanTable) primaryPart(i int) (keyRange, bool) {
	if i > len(pt.Splits) {
		return keyRange{}, false
	}
	return bounds(pt.Splits, i), true
}

// owner is the part that scans derived range j.
func (p *Plan) owner(j int) int { return j % p.Parts }

// Check reports what is wrong with a plan read from a file.
func (p *Plan) Check(sp *schema.Plan) error {
	if p.Format != planFormat {
		return fmt.Errorf("plan format %d: this denorm reads format %d", p.Format, planFormat)
	}
	if p.Parts < 1 {
		return fmt.Errorf("plan: parts %d: want at least 1", p.Parts)
	}
	for _, pt := range p.Tables {
		prim := sp.Table(pt.Primary)
		if prim == nil || prim.Role != schema.RolePrimary {
			return fmt.Errorf("plan: %s is not a primary table of the schema", pt.Primary)
		}
		if !sorted(pt.Splits) {
			return fmt.Errorf("plan: splits of %s are not in increasing order", pt.Primary)
		}
		want := 0
		for _, t := range sp.TablesOf(prim.Entity) {
			if t.Role != schema.RolePrimary {
				want++
			}
		}
		if len(pt.Derived) != want {
			return fmt.Errorf("plan: %s has %d derived tables in the plan, %d in the schema: make the plan again", pt.Primary, len(pt.Derived), want)
		}
		for _, d := range pt.Derived {
			t := sp.Table(d.Table)
			if t == nil || t.Entity != prim.Entity || t.Role == schema.RolePrimary {
				return fmt.Errorf("plan: %s is not a derived table of %s in the schema", d.Table, pt.Primary)
			}
			if !sorted(d.Splits) {
				return fmt.Errorf("plan: splits of %s are not in increasing order", d.Table)
			}
		}
	}
	return nil
}

func sorted(ks [][]byte) bool {
	for i := 1; i < len(ks); i++ {
		if bytes.Compare(ks[i-1], ks[i]) >= 0 {
			return false
		}
	}
	return true
}

// ID is a digest of the plan, which partial results carry so that results
// of another plan are not merged by mistake.
func (p *Plan) ID() string {
	b, _ := json.Marshal(p)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// WritePlan writes p to path (atomically: write, rename).
func WritePlan(path string, p *Plan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// ReadPlan reads a plan file.
func ReadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	p, err := ParsePlan(b)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return p, nil
}

// ParsePlan decodes a plan file's bytes; unknown fields are errors. It
// checks the format and the order of the splits, not the schema (Check).
func ParsePlan(b []byte) (*Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the plan")
	}
	if p.Format != planFormat {
		return nil, fmt.Errorf("format %d: this denorm reads format %d", p.Format, planFormat)
	}
	if p.Parts < 1 {
		return nil, fmt.Errorf("parts %d: want at least 1", p.Parts)
	}
	for _, pt := range p.Tables {
		if !sorted(pt.Splits) {
			return nil, fmt.Errorf("splits of %s are not in increasing order", pt.Primary)
		}
		for _, d := range pt.Derived {
			if !sorted(d.Splits) {
				return nil, fmt.Errorf("splits of %s are not in increasing order", d.Table)
			}
		}
	}
	return &p, nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
