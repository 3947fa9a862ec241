package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Merge combines the partial results of every part of p into one report.
// A range whose expected and stored checksums agree is valid whole; the
// others are diffed row by row (reading st: those ranges and the primary
// table), and repaired unless opts.DryRun. Results of another plan, a part
// missing or a part's primary range counted twice are errors: the report
// would be wrong.
func Merge(ctx context.Context, sp *schema.Plan, st store.Store, p *Plan, parts []*Partial, opts Options) (*Report, error) {
	ms := newMetered(st, opts.Rate)
	return merge(ctx, sp, ms, p, parts, opts, true)
}

// ErrResults is wrapped by the errors of Merge about the partial results
// themselves (missing, of another plan, counted twice), as against the
// store's errors during the diff.
var ErrResults = errors.New("partial results do not fit the plan")

// slot is one range's merged checksums.
type slot struct {
	exp, stored Acc
	hasStored   bool
}

// target is an unequal range to diff.
type target struct {
	ti, ri      int
	exp, stored Acc
	// slice of slices: a range too large for one diff is diffed in
	// slices, each taking the copies whose key hashes to it (slice.go).
	slice, slices int
}

func merge(ctx context.Context, sp *schema.Plan, ms *metered, p *Plan, parts []*Partial, opts Options, all bool) (*Report, error) {
	rep := newReport(opts.DryRun)
	seen := map[int]bool{}
	for _, pr := range parts {
		if pr.Plan != p.ID() {
			return nil, fmt.Errorf("reconcile: merge: the result of part %d is of plan %s, not %s: %w", pr.Part, pr.Plan, p.ID(), ErrResults)
		}
		if pr.Part < 0 || pr.Part >= p.Parts || seen[pr.Part] {
			return nil, fmt.Errorf("reconcile: merge: part %d: out of range or given twice: %w", pr.Part, ErrResults)
		}
		seen[pr.Part] = true
		rep.Add(pr.Report)
	}
	if all {
		for i := 0; i < p.Parts; i++ {
			if !seen[i] {
				return nil, fmt.Errorf("reconcile: merge: no result of part %d of %d (run it: denorm reconcile run --part %d): %w", i, p.Parts, i, ErrResults)
			}
		}
	}
	refs := newRefCache(refCacheCap)
	fx := newFixer()
	for i := range p.Tables {
		pt := &p.Tables[i]
		j, err := newJob(sp, ms, p, pt, opts, refs, fx)
		if err != nil {
			return nil, err
		}
		slots := make([][]slot, len(j.derived))
		for ti, d := range j.derived {
			slots[ti] = make([]slot, d.ranges())
		}
		for _, pr := range parts {
			for _, rr := range pr.Ranges {
				ti, ok := j.byName[rr.Table]
				if !ok {
					continue // another primary table's
				}
				if rr.Range < 0 || rr.Range >= len(slots[ti]) {
					return nil, fmt.Errorf("reconcile: merge: part %d: %s has no range %d in the plan: %w", pr.Part, rr.Table, rr.Range, ErrResults)
				}
				s := &slots[ti][rr.Range]
				if rr.Expect != nil {
					s.exp.add(*rr.Expect)
				}
				if rr.Stored != nil {
					if s.hasStored {
						return nil, fmt.Errorf("reconcile: merge: range %d of %s scanned by two parts: %w", rr.Range, rr.Table, ErrResults)
					}
					s.stored, s.hasStored = *rr.Stored, true
				}
			}
		}
		var todo []target
		for ti, d := range j.derived {
			for ri, s := range slots[ti] {
				if !s.hasStored {
					if all {
						return nil, fmt.Errorf("reconcile: merge: range %d of %s has no stored checksum (part %d): %w", ri, d.t.Name, p.owner(ri), ErrResults)
					}
					continue
				}
				if err := covered(p, parts, ri); err != nil {
					return nil, fmt.Errorf("reconcile: merge: range %d of %s: %v: %w", ri, d.t.Name, err, ErrResults)
				}
				if equal(d, s.exp, s.stored) {
					rep.Ranges.Equal++
					if d.fast {
						rep.Kinds[d.kind].Valid += s.stored.Copies
					} else {
						rep.Kinds[d.kind].Valid += s.exp.Copies
					}
					continue
				}
				rep.Ranges.Unequal++
				todo = append(todo, target{ti: ti, ri: ri, exp: s.exp, stored: s.stored, slices: 1})
			}
		}
		if err := j.diff(ctx, rep, todo); err != nil {
			return nil, err
		}
	}
	rep.addReads(ms.Reads(), ms.Gets())
	return rep, nil
}

// covered checks that the expected checksum of range ri has every primary
// part's rows exactly once.
func covered(p *Plan, parts []*Partial, ri int) error {
	n := make([]int, p.Parts)
	for _, pr := range parts {
		if pr.OwnedOnly && p.owner(ri) != pr.Part {
			continue
		}
		for _, pp := range pr.PrimaryParts {
			if pp < 0 || pp >= p.Parts {
				return fmt.Errorf("part %d names primary part %d", pr.Part, pp)
			}
			n[pp]++
		}
	}
	for pp, k := range n {
		if k != 1 {
			return fmt.Errorf("primary part %d counted %d times, want once", pp, k)
		}
	}
	return nil
}

// equal reports whether a range's stored checksum matches the expected. A
// fast-mode sketch compares sums only: the expected side counts
// increments, the stored side totals.
func equal(d *derivedTable, exp, stored Acc) bool {
	if d.fast {
		return exp.Sum == stored.Sum
	}
	return exp.Sum == stored.Sum && exp.Cells == stored.Cells
}
