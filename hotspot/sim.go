package hotspot

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/denorm/denorm/cost"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// sim holds one simulation's state.
type sim struct {
	plan  *schema.Plan
	table *schema.Table
	gen   *entityGen
	opts  Options
	rng   *rand.Rand
	// keyFields are the fields a row key reads, plus the `when` field of a
	// partial table.
	keyFields []string
	queries   []*schema.Query
	notes     []string
	// whenInKey: the table is partial and its key reads the `when` field.
	whenInKey bool
	// scratch holds one sample's field values; keys are encoded from it
	// at once, so one map serves every sample.
	scratch rowkey.Values
}

// maxWhenDraws bounds the draws for a set `when` field; past it, the field
// counts as never set and the simulation stops trying.
const maxWhenDraws = 10_000

// Simulate runs the table's workload over its regions and measures how the
// load spreads.
func Simulate(ctx context.Context, p *schema.Plan, opts Options) (*Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t, err := pickTable(p, o.Table)
	if err != nil {
		return nil, err
	}
	ent := p.Entity(t.Entity)
	if ent == nil || t.Key == nil {
		return nil, fmt.Errorf("hotspot: table %s has no entity or row key", t.Name)
	}
	s := &sim{
		plan: p, table: t, gen: newEntityGen(p, ent), opts: o,
		rng:       rand.New(rand.NewPCG(o.Seed, 0x5eed5eed)),
		keyFields: t.Key.Fields(),
		scratch:   rowkey.Values{},
	}
	for _, f := range s.keyFields {
		if t.When != "" && f == t.When {
			s.whenInKey = true
		}
	}
	for _, q := range p.Queries {
		if q.Table == t.Name && q.Rate > 0 {
			s.queries = append(s.queries, q)
		}
	}
	res := &Result{
		Schema: p.Name, Table: t.Name, Key: t.Key.Exprs(),
		Source: SourceSimulation, Unit: "requests/s",
		Start: o.Start, Duration: o.Duration, Step: o.Step, Seed: o.Seed,
	}
	res.WritesPerSecond, res.BytesPerRow, err = s.rates()
	if err != nil {
		return nil, err
	}
	for _, q := range s.queries {
		res.ReadsPerSecond += q.Rate
	}
	steps := int(o.Duration / o.Step)
	res.Duration = time.Duration(steps) * o.Step // whole steps only
	stepSec := o.Step.Seconds()
	perStep := res.WritesPerSecond * stepSec
	n := min(o.SamplesPerStep, int(math.Ceil(perStep)))
	res.SamplesPerStep = n

	initial := t.Presplit
	if o.Regions > 0 {
		initial = o.Regions
	}
	maxAlive, err := regionBound(max(initial, 1), steps)
	if err != nil {
		return nil, err
	}
	splits, layout, err := initialSplits(t, o.Regions, s.sampleAcross)
	if err != nil {
		return nil, err
	}
	res.Layout = layout
	res.SplitSize, res.SplitScale = s.splitSize(res.WritesPerSecond*res.BytesPerRow*o.Duration.Seconds(), len(splits) == 0)
	rs := newRegions(splits)

	for step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hotspot: simulating %s: %w", t.Name, err)
		}
		t0 := o.Start.Add(time.Duration(step) * o.Step)
		if n > 0 {
			weight := perStep / float64(n)
			before := perStep * float64(step)
			for i := range n {
				// Spread samples evenly over the step, jittered, so that
				// time-ordered keys move within a step as they would.
				frac := (float64(i) + s.rng.Float64()) / float64(n)
				c := clock{nowMs: t0.Add(time.Duration(frac * float64(o.Step))).UnixMilli(), serial: int64(before + frac*perStep)}
				key, err := s.writeKey(c)
				if err != nil {
					return nil, err
				}
				l := rs.alive[rs.find(key)]
				l.writes += weight
				l.bytes += weight * res.BytesPerRow
				l.sample(s.rng, key)
			}
		}
		if err := s.reads(rs, t0); err != nil {
			return nil, err
		}
		rs.closeStep(1 / stepSec)
		if res.SplitSize > 0 {
			if _, capped := rs.splitOver(float64(res.SplitSize), step, maxAlive); capped {
				s.notef("regions stopped splitting at %d, the most this simulation keeps", maxAlive)
			}
		}
	}
	res.Regions = rs.all
	for _, r := range res.Regions {
		r.Label = keyLabel(t, r.Start)
	}
	res.Steps = make([]Step, steps)
	for i := range res.Steps {
		res.Steps[i].At = time.Duration(i) * o.Step
	}
	res.Notes = append([]string{}, s.notes...) // [] rather than null in JSON
	summarize(res)
	return res, nil
}

func pickTable(p *schema.Plan, name string) (*schema.Table, error) {
	if name != "" {
		if t := p.Table(name); t != nil {
			return t, nil
		}
		return nil, fmt.Errorf("hotspot: schema %s has no table %q", p.Name, name)
	}
	for _, t := range p.Tables {
		if t.Role == schema.RolePrimary {
			return t, nil
		}
	}
	if len(p.Tables) == 0 {
		return nil, fmt.Errorf("hotspot: schema %s has no tables", p.Name)
	}
	return p.Tables[0], nil
}

// rates works out the table's rows written per second and bytes per row.
// The workload's writes are events of all entities together, shared in
// proportion to their counts when the file gives a count per entity; each
// event writes the table's rows per record (child elements, or the share
// of records a partial table holds).
func (s *sim) rates() (perSec, bytesPerRow float64, err error) {
	w := s.plan.Workload
	events := s.plan.EventsPerSecond(s.table.Entity)
	if events <= 0 {
		return 0, 0, fmt.Errorf("hotspot: schema %s declares no workload writes_per_second", s.plan.Name)
	}
	share := 1.0
	if _, own := w.EntityWrites[s.table.Entity]; own {
		s.notef("%s events at their own rate from writes_by_entity", s.table.Entity)
	} else if len(w.EntityCounts) > 1 && w.Entities > 0 {
		share = float64(w.EntityCounts[s.table.Entity]) / float64(w.Entities)
		s.notef("writes shared between entities by their counts: %.3g%% are %s events", 100*share, s.table.Entity)
	}
	lay := cost.TableLayout(s.plan, s.table)
	rows := lay.RowsPerRecord
	var cellBytes float64
	for _, c := range lay.Cells {
		cellBytes += float64(cost.CellBytes(int(lay.KeyBytes), len(c.Family), int(c.QualBytes), int(c.ValBytes))) * c.PerRow
	}
	if s.table.Counter != nil {
		// One increment per event (per element for `each`), on one of the
		// buckets; increments rewrite the same rows, so the table does
		// not grow with them.
		rows = 1
		if ch := s.gen.ent.Child(s.table.Each); ch != nil {
			rows = float64(max(ch.Typical, 1))
			if ch.Typical == 0 {
				rows = float64(ch.Max)
			}
		}
		cellBytes = 0
		s.notef("counter table: increments do not grow regions, so they never split")
	}
	return events * share * rows, cellBytes, nil
}

// splitSize picks the region size that triggers a split, and how much it
// is scaled down from the configured one.
func (s *sim) splitSize(totalBytes float64, oneRegion bool) (int64, float64) {
	if s.opts.SplitSize < 0 {
		return 0, 0
	}
	if s.table.SplitPolicy == store.SplitDisabled && s.opts.SplitSize == 0 {
		s.notef("split_policy disabled: regions never split")
		return 0, 0
	}
	maxFile := float64(s.plan.Ops.RegionMaxFilesize)
	if maxFile <= 0 {
		maxFile = DefaultRegionMaxFilesize
	}
	if s.opts.SplitSize > 0 {
		return s.opts.SplitSize, maxFile / float64(s.opts.SplitSize)
	}
	if oneRegion && totalBytes > 0 && totalBytes < autoSplits*maxFile {
		size := math.Max(totalBytes/autoSplits, 1)
		s.notef("region size scaled down %.0fx so that a table starting as one region splits within the run", maxFile/size)
		return int64(size), maxFile / size
	}
	return int64(maxFile), 1
}

// writeKey draws one written row's key at moment c.
func (s *sim) writeKey(c clock) ([]byte, error) {
	var vals rowkey.Values
	var err error
	for try := 0; ; try++ {
		vals, err = s.gen.values(s.rng, c, s.keyFields, s.scratch)
		if err != nil {
			return nil, err
		}
		// A partial table only gets rows whose `when` field is set. The
		// write rate already counts only those; when the key reads the
		// field, draw again until it is set, so the key has a real value.
		if !s.whenInKey || schema.Set(vals[s.table.When]) {
			break
		}
		if try >= maxWhenDraws {
			s.whenInKey = false
			s.notef("%s is almost never set in the workload: keys drawn with it unset", s.table.When)
			break
		}
	}
	key, err := s.table.Key.Encode(vals)
	if err != nil {
		return nil, fmt.Errorf("hotspot: row key of %s: %w", s.table.Name, err)
	}
	if cn := s.table.Counter; cn != nil && cn.Buckets > 1 {
		key = append(key, byte(s.rng.IntN(cn.Buckets)))
	}
	return key, nil
}

// sampleAcross draws keys at moments spread over the whole run, for split
// points of keys with no known distribution.
func (s *sim) sampleAcross(n int) ([][]byte, error) {
	r := rand.New(rand.NewPCG(s.opts.Seed, 0x5a3b1e))
	keys := make([][]byte, 0, n)
	for range n {
		frac := r.Float64()
		c := clock{nowMs: s.opts.Start.Add(time.Duration(frac * float64(s.opts.Duration))).UnixMilli(), serial: r.Int64N(1 << 40)}
		k, err := s.writeKey(c)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// reads samples each query's executions in a step and counts one request
// on every region a scan range touches (a scan opens a scanner on each).
func (s *sim) reads(rs *regions, t0 time.Time) error {
	stepSec := s.opts.Step.Seconds()
	for _, q := range s.queries {
		total := q.Rate * stepSec
		n := min(s.opts.QuerySamples, int(math.Ceil(total)))
		if n == 0 {
			continue
		}
		weight := total / float64(n)
		for i := range n {
			frac := (float64(i) + s.rng.Float64()) / float64(n)
			now := t0.Add(time.Duration(frac * float64(s.opts.Step))).UnixMilli()
			ranges, err := s.queryRanges(q, clock{nowMs: now, serial: int64(frac * total)})
			if err != nil {
				return err
			}
			for _, rg := range ranges {
				first := rs.find(rg.Start)
				for j := first; j < len(rs.alive); j++ {
					l := rs.alive[j]
					if rg.Stop != nil && j > first && bytesGE(l.start, rg.Stop) {
						break
					}
					l.reads += weight
				}
			}
		}
	}
	return nil
}

func bytesGE(a, b []byte) bool { return string(a) >= string(b) }

// queryRanges is the key ranges one execution of q reads.
func (s *sim) queryRanges(q *schema.Query, c clock) ([]rowkey.Range, error) {
	whole := []rowkey.Range{{}}
	if q.FullScan || q.Shape == schema.ShapeFull {
		return whole, nil
	}
	var by []string
	for _, f := range q.By {
		if q.Range == nil || f != q.Range.Field {
			by = append(by, f)
		}
	}
	vals, err := s.gen.values(s.rng, c, by, s.scratch)
	if err != nil {
		return nil, err
	}
	var ranges []rowkey.Range
	if q.Range != nil && q.Range.OnKey && q.Range.Last > 0 {
		f := s.gen.ent.Field(q.Range.Field)
		if f != nil && f.Type == rowkey.Timestamp {
			ranges, err = s.table.Key.RangeBounds(vals, q.Range.Field, c.nowMs-q.Range.Last.Milliseconds(), c.nowMs+1)
		} else {
			ranges, err = s.table.Key.PrefixBounds(vals)
		}
	} else {
		ranges, err = s.table.Key.PrefixBounds(vals)
	}
	if err != nil {
		s.notef("query %s: %v; counted as a full scan", q.Name, err)
		return whole, nil
	}
	return ranges, nil
}

// notef records an assumption once.
func (s *sim) notef(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	for _, have := range s.notes {
		if have == n {
			return
		}
	}
	s.notes = append(s.notes, n)
}

// keyLabel reads a whole row key back into its first field values, for
// people; split keys that are only a prefix (a hash, a salt) give "".
func keyLabel(t *schema.Table, key []byte) string {
	if len(key) == 0 {
		return ""
	}
	parts, err := t.Key.Decode(key)
	if err != nil {
		return ""
	}
	var out []string
	for _, d := range parts {
		if d.Part.Func != rowkey.Plain && d.Part.Func != rowkey.Reverse {
			continue
		}
		v := fmt.Sprint(d.Value)
		if d.Part.Type == rowkey.Timestamp {
			if ms, ok := d.Value.(int64); ok {
				v = time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
			}
		}
		out = append(out, d.Part.Field+"="+v)
		if len(out) == 2 {
			break
		}
	}
	return strings.Join(out, " ")
}
