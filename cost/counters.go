package cost

import (
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// What each counter mode stores, and whether it grows with the records:
//
//   - fast: one total cell per add column in each bucket row, shared by
//     every record that counts there. The figure is one counter's rows and
//     stays out of the totals.
//   - exact: one contribution cell per record (per element, with each) and
//     add column, qualifier = add qualifier, a zero byte, the entity key.
//     It grows with the records: counted per record, in the totals.
//   - bounded: per counter row one state cell per log stream that counts
//     in it (its share of each add column's total), shared (and noted); per record, the Counted record its primary row
//     keeps of what the totals hold of it, which grows with the records:
//     counted per record, in the totals.

// stateStreamBytes is a stream's sequence in its part cell of a bounded
// row: an 8-byte stream id and two varint offsets.
const stateStreamBytes = 8 + 10 + 10

// EntityKeyBytes is the expected encoded size of an entity's key (the
// identity exact contributions carry in their qualifier).
func EntityKeyBytes(e *schema.Entity) int64 {
	var n int64
	for _, k := range e.Key {
		f := e.Field(k)
		p := rowkey.Part{Field: k}
		if f != nil {
			p.Type = f.Type
		}
		n += KeyPartBytes(p, f)
	}
	return n
}

// BoundedRowBytes is a bounded counter row's size with one log stream: the
// stream's part cell (its totals, sequence and settled position). Each
// further stream that counts in the row adds a part cell of the same size.
func BoundedRowBytes(p *schema.Plan, t *schema.Table) int64 {
	key := int(KeyBytes(p, t))
	state := 1 + 1 + stateStreamBytes + 1
	for _, a := range t.Counter.Adds {
		state += 2 + len(a.Family) + len(a.Qualifier) + 10
	}
	fam := t.Families[0].Name
	if len(t.Counter.Adds) > 0 {
		fam = t.Counter.Adds[0].Family
	}
	return int64(CellBytes(key, len(fam), 2+8, state))
}

// counterLayout fills a counter table's layout for its mode.
func counterLayout(p *schema.Plan, t *schema.Table, e *schema.Entity, l *Layout) {
	perRecord := 1.0 // rows one record counts in: 1, or its elements
	if t.Each != "" && e != nil {
		if ch := e.Child(t.Each); ch != nil {
			n, typical := childCount(ch)
			perRecord = n
			if !typical {
				l.Assumed = append(l.Assumed, "child list "+ch.Name+" counted at its max; declare typical: for a closer figure")
			}
		}
	}
	perRecord *= p.WhenShare(t)
	switch t.Counter.Mode {
	case schema.CounterExact:
		var ek int64
		if e != nil {
			ek = EntityKeyBytes(e)
		}
		l.RowsPerRecord = perRecord
		for _, a := range t.Counter.Adds {
			l.Cells = append(l.Cells, CellShape{Family: a.Family, Qualifier: a.Qualifier, QualBytes: int64(len(a.Qualifier)) + 1 + ek, ValBytes: 8, PerRow: 1})
		}
		l.Assumed = append(l.Assumed, "mode exact: one contribution cell per record and add in the counter rows, so a row grows with the records counting in it; counted per record, in the totals")
	case schema.CounterBounded:
		// The Counted record in the primary row: stream, offset and, per
		// count, the counter cell's ref and two varints.
		var prim int64
		book := "d"
		if pt := p.Primary(t.Entity); pt != nil {
			prim = KeyBytes(p, pt)
			book = pt.Families[0].Name
		}
		var perCount int64
		for _, a := range t.Counter.Adds {
			perCount += 4 + int64(len(t.Name)) + l.KeyBytes + int64(len(a.Family)) + int64(len(a.Qualifier)) + 2 + 2
		}
		record := 8 + 4 + 1 + int64(perRecord*float64(perCount))
		l.KeyBytes = prim
		l.RowsPerRecord = 1
		l.Cells = []CellShape{{Family: book, Qualifier: "\x00c", QualBytes: 2, ValBytes: record, PerRow: 1}}
		l.Assumed = append(l.Assumed, "mode bounded: per record, the Counted record its primary row keeps (counted, in the totals); each counter row is one state cell per log stream counting there, shared by every record of the stream: "+
			itoa(BoundedRowBytes(p, t))+" bytes with one log stream, as many more per stream, whatever the traffic")
	default:
		l.RowsPerRecord = 1
		if t.Counter.Buckets > 1 {
			l.RowsPerRecord = float64(t.Counter.Buckets)
		}
		for _, a := range t.Counter.Adds {
			l.Cells = append(l.Cells, CellShape{Family: a.Family, Qualifier: a.Qualifier, QualBytes: int64(len(a.Qualifier)), ValBytes: 8, PerRow: 1})
		}
	}
}

// SharedCounter reports whether a counter table's figure is shared rows
// (fast mode) rather than bytes per record.
func SharedCounter(t *schema.Table) bool {
	return t.Role == schema.RoleCounter && t.Counter != nil && t.Counter.Mode != schema.CounterExact && t.Counter.Mode != schema.CounterBounded
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}
