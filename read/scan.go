package read

import (
	"bytes"
	"context"
	"fmt"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// maxThinRounds bounds the refills of a thin-index page that lost hits to
// verification.
const maxThinRounds = 4

// item is one logical result row of a range: a table row, or for a counter
// with buckets the adjacent rows of its buckets.
type item struct {
	rows []store.Row
	last []byte // the key of the last row, where the range resumes
	sort []byte // the merge key: the logical key without the fanned salt
}

// cursor reads one range lazily, one item ahead.
type cursor struct {
	sc      store.Scanner
	pending *store.Row
	head    *item
	buckets bool // rows are grouped by key without its trailing bucket byte
	salt    int  // offset of the fanned salt byte; -1 when none
	err     error
}

func copyRow(r store.Row) store.Row {
	out := store.Row{Key: append([]byte(nil), r.Key...), Cells: make([]store.Cell, len(r.Cells))}
	for i, c := range r.Cells {
		out.Cells[i] = store.Cell{Row: out.Key, Family: c.Family, Qualifier: append([]byte(nil), c.Qualifier...), Timestamp: c.Timestamp, Value: append([]byte(nil), c.Value...)}
	}
	return out
}

func (c *cursor) logical(key []byte) []byte {
	if c.buckets && len(key) > 0 {
		return key[:len(key)-1]
	}
	return key
}

// advance loads the next item into head (nil at the end).
func (c *cursor) advance(ctx context.Context) {
	c.head = nil
	var it *item
	for {
		var row store.Row
		if c.pending != nil {
			row, c.pending = *c.pending, nil
		} else if c.sc.Next(ctx) {
			row = copyRow(c.sc.Row())
		} else {
			c.err = c.sc.Err()
			break
		}
		if it != nil && !bytes.Equal(c.logical(row.Key), c.logical(it.last)) {
			c.pending = &row
			break
		}
		if it == nil {
			it = &item{}
		}
		it.rows = append(it.rows, row)
		it.last = row.Key
		if !c.buckets {
			break
		}
	}
	if it == nil {
		return
	}
	lk := c.logical(it.last)
	if c.salt >= 0 && c.salt < len(lk) {
		it.sort = append(append([]byte(nil), lk[:c.salt]...), lk[c.salt+1:]...)
	} else {
		it.sort = lk
	}
	c.head = it
}

// saltOffset finds the byte where fanned-out ranges differ: the salt
// bucket. Only one fanned salt is supported.
func saltOffset(ranges []rowkey.Range) (int, error) {
	if len(ranges) < 2 {
		return -1, nil
	}
	a, b := ranges[0].Start, ranges[1].Start
	pos := -1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			pos = i
			break
		}
	}
	if pos < 0 {
		return -1, fmt.Errorf("read: fanned-out ranges do not differ")
	}
	for _, r := range ranges {
		if len(r.Start) != len(a) || !bytes.Equal(r.Start[:pos], a[:pos]) || !bytes.Equal(r.Start[pos+1:], a[pos+1:]) {
			return -1, fmt.Errorf("read: more than one fanned-out salt part is not supported")
		}
	}
	return pos, nil
}

func (r *Reader) scan(ctx context.Context, qq *query, vals rowkey.Values, limit int, req Request) (*Result, error) {
	if (qq.q.Shape == schema.ShapeFull || qq.q.Shape == schema.ShapeRange || qq.q.Bound.Parts == 0) && !req.AllowFullScan {
		return nil, fmt.Errorf("%w: query %s fixes no key part: a full scan, refused (allow it explicitly for batch use)", ErrBadRequest, qq.q.Name)
	}
	ranges, err := qq.t.Key.PrefixBounds(vals)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	buckets := qq.t.Role == schema.RoleCounter && qq.t.Counter != nil && qq.t.Counter.Buckets > 1
	if buckets && qq.q.Bound.Full {
		// Every key part fixed: the bucket rows are exactly the key plus one
		// byte, and a longer key of the same prefix must not be mixed in.
		for i := range ranges {
			ranges[i].Stop = rowkey.PrefixEnd(ranges[i].Start)
		}
	}
	salt, err := saltOffset(ranges)
	if err != nil {
		return nil, err
	}
	tok := token{Query: qq.q.Name, Last: make([][]byte, len(ranges)), Done: make([]bool, len(ranges))}
	if req.Next != "" {
		if tok, err = decodeToken(req.Next, qq.q.Name, len(ranges)); err != nil {
			return nil, err
		}
	}
	caching := min(limit+1, 1000)
	if buckets {
		caching = min((limit+1)*qq.t.Counter.Buckets, 1000)
	}
	cursors := make([]*cursor, len(ranges))
	defer func() {
		for _, c := range cursors {
			if c != nil {
				c.sc.Close()
			}
		}
	}()
	if err := r.openCursors(ctx, qq, ranges, tok, caching, cursor{buckets: buckets, salt: salt}, cursors); err != nil {
		return nil, err
	}
	res := &Result{Rows: []map[string]any{}}
	// For a thin index, the limit counts returned rows: a page whose hits
	// were partly stale reads more hits, for a few rounds at most, so that a
	// badly stale index cannot turn one request into a long scan.
	var hits []store.Row
	taken := 0
	for round := 0; ; round++ {
		hits = hits[:0]
		exhausted := true
		for taken < limit {
			best := -1
			for i, c := range cursors {
				if c == nil || c.head == nil {
					continue
				}
				if best < 0 || bytes.Compare(c.head.sort, cursors[best].head.sort) < 0 {
					best = i
				}
			}
			if best < 0 {
				break
			}
			exhausted = false
			c := cursors[best]
			it := c.head
			tok.Last[best] = it.last
			c.advance(ctx)
			if c.err != nil {
				return nil, fmt.Errorf("read: query %s: scanning %s: %w", qq.q.Name, qq.t.Name, c.err)
			}
			if c.head == nil {
				tok.Done[best] = true
			}
			if qq.t.Thin() {
				hits = append(hits, it.rows[0])
				taken++
				continue
			}
			row, ok, err := r.decodeItem(qq, it)
			if err != nil {
				return nil, err
			}
			if ok && matches(row, vals, qq.q.Bound.Unused) {
				res.Rows = append(res.Rows, row)
				taken++
			}
		}
		if !qq.t.Thin() || len(hits) == 0 {
			break
		}
		if err := r.verify(ctx, qq, hits, req.Repair, res); err != nil {
			return nil, err
		}
		taken = len(res.Rows)
		if taken >= limit || exhausted || round == maxThinRounds-1 {
			break
		}
	}
	more := false
	for i, c := range cursors {
		if c != nil && c.head != nil {
			more = true
		} else {
			tok.Done[i] = true
		}
	}
	if more {
		if res.Next, err = tok.encode(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// decodeItem turns one item into a result row; ok is false for an entity
// that is deleted.
func (r *Reader) decodeItem(qq *query, it *item) (map[string]any, bool, error) {
	switch qq.t.Role {
	case schema.RolePrimary:
		vals, _, ok, err := r.entityRow(qq, it.rows[0])
		return vals, ok, err
	case schema.RoleCounter:
		row, err := r.counterRow(qq, it)
		return row, err == nil, err
	default:
		row, err := r.indexRow(qq, it.rows[0])
		return row, err == nil, err
	}
}

// matches applies the fields the key could not use as a filter.
func matches(row map[string]any, vals rowkey.Values, unused []string) bool {
	for _, f := range unused {
		if v, ok := row[f]; ok && !equalValue(v, vals[f]) {
			return false
		}
	}
	return true
}

// get reads one row by its full key.
func (r *Reader) get(ctx context.Context, qq *query, vals rowkey.Values, req Request) (*Result, error) {
	key, err := qq.t.Key.Encode(vals)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	row, err := r.st.Get(ctx, qq.t.Name, store.Get{Row: key})
	if err != nil {
		return nil, fmt.Errorf("read: query %s: get from %s: %w", qq.q.Name, qq.t.Name, err)
	}
	res := &Result{Rows: []map[string]any{}}
	if row.Empty() {
		return res, nil
	}
	row = copyRow(row)
	if qq.t.Thin() {
		return res, r.verify(ctx, qq, []store.Row{row}, req.Repair, res)
	}
	out, ok, err := r.decodeItem(qq, &item{rows: []store.Row{row}, last: row.Key})
	if err != nil {
		return nil, err
	}
	if ok {
		res.Rows = append(res.Rows, out)
	}
	return res, nil
}
