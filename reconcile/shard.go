package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/denorm/denorm/store"
)

// Shard names one of n processes sharing a table: regions of the primary
// table are dealt round robin, region j to shard j mod n, so n shards cover
// every row exactly once and each reads whole regions.
type Shard struct {
	I, N int
}

// ParseShard reads "i/n" with 0 <= i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("reconcile: shard %q: want i/n with 0 <= i < n", s)
	}
	return Shard{I: i, N: n}, nil
}

// keyRange is [Start, Stop); an empty Stop is the end of the table.
type keyRange struct{ Start, Stop []byte }

func (r keyRange) contains(k []byte) bool {
	return bytes.Compare(k, r.Start) >= 0 && (len(r.Stop) == 0 || bytes.Compare(k, r.Stop) < 0)
}

// ranges lists the key ranges of a run over table: the caller's range,
// cut to the regions of the shard.
func ranges(ctx context.Context, st store.Store, table string, start, stop []byte, sh Shard) ([]keyRange, error) {
	whole := keyRange{Start: start, Stop: stop}
	if sh.N <= 1 {
		return []keyRange{whole}, nil
	}
	regs, err := st.Regions(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("reconcile: regions of %s: %w", table, err)
	}
	var out []keyRange
	for j, r := range regs {
		if j%sh.N != sh.I {
			continue
		}
		kr := intersect(keyRange{Start: r.Start, Stop: r.End}, whole)
		if len(kr.Stop) == 0 || bytes.Compare(kr.Start, kr.Stop) < 0 {
			out = append(out, kr)
		}
	}
	return out, nil
}

func intersect(a, b keyRange) keyRange {
	out := a
	if bytes.Compare(b.Start, out.Start) > 0 {
		out.Start = b.Start
	}
	if len(b.Stop) > 0 && (len(out.Stop) == 0 || bytes.Compare(b.Stop, out.Stop) < 0) {
		out.Stop = b.Stop
	}
	return out
}
