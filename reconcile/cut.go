package reconcile

import (
	"bytes"
	"context"
	"fmt"

	"github.com/denorm/denorm/store"
)

// A single-process run of one part has nobody to agree its ranges with, so
// it does not sample the primary table to place them (a whole extra scan of
// the largest table). It cuts them from the stored side instead: each
// derived table is scanned once, whole, and a range ends after RangeRows
// stored rows; the scan yields the splits and every range's stored checksum
// together. The primary pass then adds each expected copy to the range its
// key falls in, as with a sampled plan: a copy missing from the store falls
// in whichever range spans its key (the first or last is open-ended), so
// nothing is lost by placing the boundaries on stored keys only.
//
// The ranges bound a diff's memory as a sampled plan's do, and better: a
// range holds at most RangeRows stored rows (a sample only estimates it).

// cutPass scans every derived table of j whole, cutting it into ranges of
// at most rows stored rows. It sets the splits of j and of its plan table,
// and returns the stored checksum of every range as storedPass does.
func (j *job) cutPass(ctx context.Context, part, rows int) (map[[2]int]Acc, error) {
	type cut struct {
		splits [][]byte
		sums   []Acc
	}
	cuts := make([]cut, len(j.derived))
	err := forEach(ctx, j.workers(), len(j.derived), func(ti int) error {
		splits, sums, err := j.storedCut(ctx, part, ti, rows)
		cuts[ti] = cut{splits, sums}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := map[[2]int]Acc{}
	for ti, c := range cuts {
		j.derived[ti].splits = c.splits
		j.pt.Derived[ti].Splits = c.splits
		for ri, a := range c.sums {
			out[[2]int{ti, ri}] = a
		}
	}
	return out, nil
}

// storedCut scans derived table ti into ranges of at most rows rows: the
// first key of every range after the first, and each range's checksum.
func (j *job) storedCut(ctx context.Context, part, ti, rows int) ([][]byte, []Acc, error) {
	d := j.derived[ti] // newJob keeps the plan's order: j.pt.Derived[ti] is d
	sc, err := j.st.Scan(ctx, d.t.Name, store.Scan{Caching: 1000})
	if err != nil {
		return nil, nil, fmt.Errorf("reconcile: scan %s: %w", d.t.Name, err)
	}
	defer sc.Close()
	var splits [][]byte
	sums := []Acc{{}}
	var h hasher
	var total int64
	in := 0
	for sc.Next(ctx) {
		row := sc.Row()
		if in == rows {
			splits = append(splits, bytes.Clone(row.Key))
			sums = append(sums, Acc{})
			in = 0
			j.progress(Progress{Part: part, Phase: "derived", Table: d.t.Name, Rows: total})
		}
		in++
		total++
		j.storedRow(d, &sums[len(sums)-1], &h, row)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reconcile: scan %s: %w", d.t.Name, err)
	}
	return splits, sums, nil
}
