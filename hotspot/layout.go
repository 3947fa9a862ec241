package hotspot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// live is a region while the simulation runs.
type live struct {
	out   *Region
	start []byte
	end   []byte // nil: the end of the table
	bytes float64
	// keys is a uniform sample of the keys the region received (inherited
	// from its parent included), seen how many keys it was drawn from.
	keys [][]byte
	seen float64
	// step accumulators
	writes, reads float64
}

// regions is the table's region map in key order.
type regions struct {
	all   []*Region // every region ever, by ID
	alive []*live   // in key order
}

func newRegions(splits [][]byte) *regions {
	rs := &regions{}
	var prev []byte
	for i := 0; i <= len(splits); i++ {
		var end []byte
		if i < len(splits) {
			end = splits[i]
		}
		rs.alive = append(rs.alive, rs.open(prev, end, -1, 0))
		prev = end
	}
	return rs
}

func (rs *regions) open(start, end []byte, parent, born int) *live {
	r := &Region{
		ID: len(rs.all), Start: start, End: end, Parent: parent,
		StartKey: store.Printable(start), EndKey: store.Printable(end),
		Born: born, Died: -1,
	}
	rs.all = append(rs.all, r)
	return &live{out: r, start: start, end: end}
}

// find returns the index of the alive region holding key.
func (rs *regions) find(key []byte) int {
	i := sort.Search(len(rs.alive), func(i int) bool { return bytes.Compare(rs.alive[i].start, key) > 0 })
	return max(i-1, 0)
}

// sample records a key into a region's reservoir.
func (l *live) sample(r *rand.Rand, key []byte) {
	l.seen++
	if len(l.keys) < reservoirSize {
		l.keys = append(l.keys, key)
		return
	}
	if j := r.Int64N(int64(l.seen)); j < reservoirSize {
		l.keys[j] = key
	}
}

// closeStep appends the step's figures (per second over stepSec) to the
// alive regions' histories and clears the accumulators.
func (rs *regions) closeStep(per float64) {
	for _, l := range rs.alive {
		l.out.Writes = append(l.out.Writes, l.writes*per)
		l.out.Reads = append(l.out.Reads, l.reads*per)
		l.out.Bytes = append(l.out.Bytes, l.bytes)
		l.writes, l.reads = 0, 0
	}
}

// splitOver splits, at their middle sampled key, the regions bigger than
// size, repeatedly while the halves still are; step is the step that just
// ended. It returns how many splits happened, and whether a split was
// skipped because maxAlive regions are alive (the bound on the run's
// memory and time: a workload far beyond the split size would otherwise
// split every region at every step).
func (rs *regions) splitOver(size float64, step, maxAlive int) (n int, capped bool) {
	for i := 0; i < len(rs.alive); {
		l := rs.alive[i]
		if l.bytes <= size {
			i++
			continue
		}
		if len(rs.alive) >= maxAlive {
			return n, true
		}
		a, b, ok := rs.split(l, step)
		if !ok {
			i++ // every sampled key is the same row: a row never splits
			continue
		}
		rs.alive = append(rs.alive[:i], append([]*live{a, b}, rs.alive[i+1:]...)...)
		n++
	}
	return n, false
}

func (rs *regions) split(l *live, step int) (a, b *live, ok bool) {
	keys := append([][]byte(nil), l.keys...)
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	if len(keys) < 2 {
		return nil, nil, false
	}
	mid := keys[len(keys)/2]
	if bytes.Equal(mid, l.start) {
		// Split past the run of keys equal to the start, if any.
		j := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], mid) > 0 })
		if j == len(keys) {
			return nil, nil, false
		}
		mid = keys[j]
	}
	cut := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], mid) >= 0 })
	frac := float64(cut) / float64(len(keys))
	l.out.Died = step
	a = rs.open(l.start, mid, l.out.ID, step+1)
	b = rs.open(mid, l.end, l.out.ID, step+1)
	a.keys, b.keys = keys[:cut:cut], keys[cut:]
	a.bytes, b.bytes = l.bytes*frac, l.bytes*(1-frac)
	a.seen, b.seen = l.seen*frac, l.seen*(1-frac)
	return a, b, true
}

// initialSplits is the table's pre-split: the split keys ddl writes into
// the create statement, or, with a region count asked for a key that starts
// with neither a salt nor a hash, even quantiles of keys sampled over the
// whole run (an operator who knows the key distribution in advance).
func initialSplits(t *schema.Table, regionsWanted int, sampleKeys func(n int) ([][]byte, error)) ([][]byte, string, error) {
	first := t.Key.Part(0)
	tt := *t
	if regionsWanted > 0 {
		tt.Presplit = regionsWanted
	}
	var splits [][]byte
	var err error
	if first.Func == rowkey.Salt && regionsWanted > 0 {
		splits, err = t.Key.SplitKeys(regionsWanted)
	} else {
		splits, _, err = ddl.SplitKeys(&tt)
	}
	if err != nil {
		return nil, "", fmt.Errorf("hotspot: split keys of %s: %w", t.Name, err)
	}
	switch {
	case len(splits) > 0 && first.Func == rowkey.Salt:
		return splits, fmt.Sprintf("%d regions pre-split by the buckets of %s", len(splits)+1, first.Expr), nil
	case len(splits) > 0:
		return splits, fmt.Sprintf("%d regions pre-split evenly over %s", len(splits)+1, first.Expr), nil
	case tt.Presplit > 1:
		keys, err := sampleKeys(50 * tt.Presplit)
		if err != nil {
			return nil, "", err
		}
		splits = rowkey.SplitKeysFromSamples(keys, tt.Presplit)
		return splits, fmt.Sprintf("%d regions pre-split at quantiles of sampled keys (the key starts with %s)", len(splits)+1, first.Expr), nil
	}
	return nil, "one region at creation (no pre-split)", nil
}
