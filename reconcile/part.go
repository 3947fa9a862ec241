package reconcile

import (
	"context"
	"fmt"
	"sync"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// RunPart runs part i of a plan: it derives the copies of the primary rows
// in the part's primary ranges and adds them to the expected checksums of
// the derived ranges they fall in (every range), checks the live copies of
// those rows (and repairs them unless DryRun), and scans the part's own
// derived ranges into their stored checksums. The partial result it
// returns is complete for the part: a rerun replaces it.
func RunPart(ctx context.Context, sp *schema.Plan, st store.Store, p *Plan, part int, opts Options) (*Partial, error) {
	if part < 0 || part >= p.Parts {
		return nil, fmt.Errorf("reconcile: part %d: the plan has parts 0 to %d", part, p.Parts-1)
	}
	ms := newMetered(st, opts.Rate)
	out, err := runPart(ctx, sp, ms, p, part, opts, false, 0)
	if err != nil {
		return nil, err
	}
	out.Report.RowsRead, out.Report.Gets = ms.Reads(), ms.Gets()
	return out, nil
}

// runPart is RunPart; with shard, the part reads every primary row and
// keeps the expected checksums of its own ranges only, so that its result
// is final alone (a single-process --shard run), while it checks the live
// copies and counts the rows of its own primary range only. With cut > 0
// (a plan of one part, made without sampling: see cut.go), it first cuts
// the derived tables into ranges of cut stored rows, which completes p.
func runPart(ctx context.Context, sp *schema.Plan, ms *metered, p *Plan, part int, opts Options, shard bool, cut int) (*Partial, error) {
	out := &Partial{Format: planFormat, Part: part, OwnedOnly: shard, Report: newReport(opts.DryRun)}
	if shard {
		for i := 0; i < p.Parts; i++ {
			out.PrimaryParts = append(out.PrimaryParts, i)
		}
	} else {
		out.PrimaryParts = []int{part}
	}
	refs := newRefCache(refCacheCap)
	fx := newFixer()
	for i := range p.Tables {
		pt := &p.Tables[i]
		j, err := newJob(sp, ms, p, pt, opts, refs, fx)
		if err != nil {
			return nil, err
		}
		var stored map[[2]int]Acc
		if cut > 0 {
			if stored, err = j.cutPass(ctx, part, cut); err != nil {
				return nil, err
			}
		}
		own, ok := pt.primaryPart(part)
		keep := func(ti, ri int) bool { return !shard || p.owner(ri) == part }
		scan := own
		if shard {
			scan = keyRange{}
		}
		exp := j.newAccs()
		if ok || shard {
			mine := func(pk []byte) bool { return ok && own.contains(pk) }
			if err := j.primaryPass(ctx, scan, keep, mine, exp, out.Report, part); err != nil {
				return nil, err
			}
		}
		if cut == 0 {
			if stored, err = j.storedPass(ctx, part); err != nil {
				return nil, err
			}
		}
		for ti, d := range j.derived {
			for ri := range exp[ti] {
				rr := RangeResult{Table: d.t.Name, Range: ri}
				if keep(ti, ri) && !exp[ti][ri].zero() {
					a := exp[ti][ri]
					rr.Expect = &a
				}
				if s, ok := stored[[2]int{ti, ri}]; ok {
					rr.Stored = &s
				}
				if rr.Expect != nil || rr.Stored != nil {
					out.Ranges = append(out.Ranges, rr)
				}
			}
		}
	}
	// After the cut, if any: it sets the plan's derived splits.
	out.Plan = p.ID()
	return out, nil
}

// worker is one goroutine's share of a primary pass: its own checksums,
// report and hash buffer, summed when the pass is done.
type worker struct {
	j    *job
	exp  accs
	rep  *Report
	h    hasher
	keep func(ti, ri int) bool
	mine func(pk []byte) bool
	// sc holds one entity's derived rows until the next: entity hashes
	// them before it derives again.
	sc layout.Scratch
	// locs are the chunk's rows whose listing in the locator is checked
	// once the chunk is derived (locator.go).
	locs []locNeed
}

// primaryPass derives every primary row of r into exp (the ranges keep
// allows), and checks the live copies of the rows mine allows.
func (j *job) primaryPass(ctx context.Context, r keyRange, keep func(ti, ri int) bool, mine func(pk []byte) bool, exp accs, rep *Report, part int) error {
	n := j.workers()
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{j: j, exp: j.newAccs(), rep: newReport(j.opts.DryRun), keep: keep, mine: mine}
	}
	ck, err := j.resume(r, ws[0])
	if err != nil {
		return err
	}
	if ck != nil {
		r.Start = ck
	}
	sum := func() (accs, *Report) {
		a, rp := j.newAccs(), newReport(j.opts.DryRun)
		for _, w := range ws {
			a.add(w.exp)
			rp.Add(w.rep)
		}
		return a, rp
	}
	var last []byte
	err = j.scanChunks(ctx, r, func(rows []store.Row) error {
		if err := forEachRow(ctx, n, rows, func(g int, row store.Row) error { return ws[g].entity(ctx, row) }); err != nil {
			return err
		}
		if err := forEach(ctx, n, n, func(g int) error { return ws[g].locators(ctx) }); err != nil {
			return err
		}
		var rowsDone int64
		for _, w := range ws {
			rowsDone += w.rep.Rows
		}
		j.progress(Progress{Part: part, Phase: "primary", Table: j.prim.Name, Rows: rowsDone})
		last = rows[len(rows)-1].Key
		return j.checkpoint(last, sum, false)
	})
	if err != nil {
		return err
	}
	// The primary pass is done: an interruption in the derived scans
	// resumes after it.
	if err := j.checkpoint(last, sum, true); err != nil {
		return err
	}
	a, rp := sum()
	exp.add(a)
	rep.Add(rp)
	return nil
}

// entity derives one primary row's copies into the worker's checksums.
func (w *worker) entity(ctx context.Context, row store.Row) error {
	j := w.j
	state, err := layout.ReadStateSkipping(j.sp, j.ent, j.prim, row, layout.SkipPending)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	mine := w.mine(row.Key)
	if mine {
		w.rep.Rows++
		w.noteLocator(row.Key, state)
	}
	if !state.Exists() {
		return nil
	}
	d, err := w.sc.DeriveCopies(j.sp, j.ent, state.Values)
	if err != nil {
		return fmt.Errorf("reconcile: %s row %s: %w", j.prim.Name, store.Printable(row.Key), err)
	}
	for _, it := range j.unexpired(d.Items, state.Version) {
		ti, ri, ok := w.slot(it.Table, it.Row)
		if !ok {
			continue
		}
		if j.derived[ti].exact {
			expectExact(&w.exp[ti][ri], &w.h, it)
			continue
		}
		a := &w.exp[ti][ri]
		for _, c := range it.Cells {
			a.Sum.Add(w.h.cell(it.Row, c.Family, c.Qualifier, c.Value, true))
			a.Cells++
		}
		a.Copies++
	}
	for _, in := range d.Increments {
		if ti, ri, ok := w.slot(in.Table, in.Row); ok {
			expectFast(&w.exp[ti][ri], &w.h, in)
		}
	}
	if !mine {
		return nil
	}
	return j.live(ctx, w.rep, row.Key, state)
}

// slot is the derived table and range a derived row falls in, if the pass
// keeps that range and the row is in the counter window.
func (w *worker) slot(table string, row []byte) (ti, ri int, ok bool) {
	if ti, ri, ok = w.j.slotOf(table, row); !ok {
		return 0, 0, false
	}
	return ti, ri, w.keep(ti, ri)
}

// slotOf is the derived table and range of a derived row, if the row is
// in the counter window.
func (j *job) slotOf(table string, row []byte) (ti, ri int, ok bool) {
	ti, ok = j.byName[table]
	if !ok {
		return 0, 0, false
	}
	d := j.derived[ti]
	if d.counter() && !j.win.covers(table, row) {
		return 0, 0, false
	}
	return ti, rangeOf(d.splits, row), true
}

// storedPass scans the derived ranges part owns into their stored
// checksums, several ranges at a time.
func (j *job) storedPass(ctx context.Context, part int) (map[[2]int]Acc, error) {
	var todo [][2]int
	for ti, d := range j.derived {
		for ri := 0; ri < d.ranges(); ri++ {
			if j.plan.owner(ri) == part {
				todo = append(todo, [2]int{ti, ri})
			}
		}
	}
	out := make(map[[2]int]Acc, len(todo))
	var mu sync.Mutex
	var rows int64
	err := forEach(ctx, j.workers(), len(todo), func(k int) error {
		a, n, err := j.storedRange(ctx, todo[k][0], todo[k][1])
		if err != nil {
			return err
		}
		mu.Lock()
		out[todo[k]] = a
		rows += n
		done := rows
		mu.Unlock()
		j.progress(Progress{Part: part, Phase: "derived", Table: j.derived[todo[k][0]].t.Name, Rows: done})
		return nil
	})
	return out, err
}

// storedRange scans one derived range into its stored checksum.
func (j *job) storedRange(ctx context.Context, ti, ri int) (Acc, int64, error) {
	d := j.derived[ti]
	r := bounds(d.splits, ri)
	sc, err := j.st.Scan(ctx, d.t.Name, store.Scan{Start: r.Start, Stop: r.Stop, Caching: 1000})
	if err != nil {
		return Acc{}, 0, fmt.Errorf("reconcile: scan %s: %w", d.t.Name, err)
	}
	defer sc.Close()
	var a Acc
	var h hasher
	var n int64
	for sc.Next(ctx) {
		n++
		j.storedRow(d, &a, &h, sc.Row())
	}
	if err := sc.Err(); err != nil {
		return Acc{}, 0, fmt.Errorf("reconcile: scan %s: %w", d.t.Name, err)
	}
	return a, n, nil
}

// storedRow adds one stored row of derived table d to a.
func (j *job) storedRow(d *derivedTable, a *Acc, h *hasher, row store.Row) {
	if d.counter() && !j.win.covers(d.t.Name, row.Key) {
		return
	}
	if d.bounded() {
		storedBounded(a, h, d.t, row)
		return
	}
	lookup := d.t.Role == schema.RoleLookup
	cells := 0
	for _, c := range row.Cells {
		switch {
		case d.exact:
			storedExact(a, h, d.t, row.Key, c)
		case d.fast:
			storedFast(a, h, row.Key, c)
		case lookup && notDerived(c.Qualifier):
			// a reference row's own cells
		default:
			a.Sum.Add(h.cell(row.Key, c.Family, c.Qualifier, c.Value, true))
			a.Cells++
			cells++
		}
	}
	if cells > 0 {
		a.Copies++
	}
}

// notDerived reports whether a lookup table cell belongs to the reference
// row (the referenced entity's latest values and bookkeeping), which no
// entity derives.
func notDerived(q []byte) bool { return layout.IsLive(q) || layout.IsBookkeeping(q) }

func (j *job) workers() int {
	if j.opts.Workers > 0 {
		return j.opts.Workers
	}
	return defaultWorkers
}

func (j *job) progress(p Progress) {
	if j.opts.Progress != nil {
		j.opts.Progress(p)
	}
}
