package reconcile

// A diff keeps the expected copies of the ranges it diffs, so a range whose
// copies exceed the diff's cap (Options.DiffCells) must not be diffed
// whole. That happens when the ranges were placed before the copies were
// known: a plan's sample that missed a dense key region, or ranges cut from
// the stored rows of a derived table that lacks most of its copies (a new
// index: cut.go cuts it into one range). Such a range is diffed in slices:
// slice s of k takes, on both sides, only the copies whose key hashes to s
// (an index or lookup row by its row key; a counter cell by its row and
// qualifier, so that even one giant counter row is split). Every copy falls
// in exactly one slice, so the k diffs together compare every copy once,
// each holding about a k-th of the range; each costs a scan of the primary
// table and of the range.

// sliceTargets splits every target whose cells pass limit into slices of
// about limit cells each.
func sliceTargets(todo []target, limit int64) []target {
	var out []target
	for _, tg := range todo {
		c := max(tg.exp.Cells, tg.stored.Cells)
		k := int((c + limit - 1) / limit)
		if k <= 1 {
			tg.slice, tg.slices = 0, 1
			out = append(out, tg)
			continue
		}
		for s := 0; s < k; s++ {
			t := tg
			t.slice, t.slices = s, k
			out = append(out, t)
		}
	}
	return out
}

// has reports whether a copy (row key, and for a counter cell its
// qualifier) falls in the target's slice.
func (tg target) has(row, qual []byte) bool {
	if tg.slices <= 1 {
		return true
	}
	return int(sliceHash(row, qual)%uint64(tg.slices)) == tg.slice
}

// sliceHash is FNV-1a over row, a separator and qual: fixed, so that both
// sides of a diff (and a rerun) agree on every copy's slice.
func sliceHash(row, qual []byte) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for _, b := range row {
		h = (h ^ uint64(b)) * prime
	}
	h = (h ^ 0xff) * prime
	for _, b := range qual {
		h = (h ^ uint64(b)) * prime
	}
	return h
}
