package reconcile

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Shard names one of n single-process runs sharing the work: the derived
// ranges of the run's plan are dealt round robin, range j to shard j mod n,
// so n shards compare every copy exactly once (Options.Shard).
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
