package cost

import (
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// The layout model: how many rows and cells one logical record puts in a
// table, and how big each part of a cell is. Sizes come from the schema's
// declared field sizes (schema.Field.AvgSize), so the estimate is only as
// good as those declarations; undeclared strings count as
// schema.DefaultStringSize bytes.

// escapeTerm is what the order-preserving key encoding adds after a string
// or bytes value (an escape and a terminator byte).
const escapeTerm = 2

// CellShape is one kind of cell a table holds, with how many of them one
// logical record writes.
type CellShape struct {
	Family    string
	Qualifier string // as written in the schema, for reports
	QualBytes int64
	ValBytes  int64
	PerRow    float64 // cells of this shape per row
}

// Layout is a table's shape per logical record.
type Layout struct {
	Table *schema.Table
	// RowsPerRecord is 1, or the expected child count for tables with one
	// row per child element. For fast counters it is the rows one counter
	// occupies (its buckets), shared by many records; exact and bounded
	// counters store per record (counters.go).
	RowsPerRecord float64
	KeyBytes      int64
	Cells         []CellShape
	// Assumed lists the guesses the layout had to make, for reports.
	Assumed []string
}

// CellsPerRecord is how many cells one record adds.
func (l Layout) CellsPerRecord() float64 {
	var n float64
	for _, c := range l.Cells {
		n += c.PerRow
	}
	return n * l.RowsPerRecord
}

// childCount is the expected element count of a child list: the declared
// typical count, else the bound.
func childCount(c *schema.Child) (float64, bool) {
	if c.Typical > 0 {
		return float64(c.Typical), true
	}
	return float64(c.Max), false
}

// KeyPartBytes is the encoded size of one key part.
func KeyPartBytes(p rowkey.Part, f *schema.Field) int64 {
	if w := p.Width(); w > 0 {
		return int64(w)
	}
	if p.Func == rowkey.Text {
		// Text has no escapes or terminator, only its delimiter: decimal
		// digits for numbers (13 for epoch milliseconds), the bytes for
		// strings.
		return textBytes(p, f) + int64(len(p.Delim))
	}
	size := int64(schema.DefaultStringSize)
	if f != nil {
		size = f.AvgSize()
	}
	return size + escapeTerm
}

// KeyBytes is the expected encoded size of a table's row key.
func KeyBytes(p *schema.Plan, t *schema.Table) int64 {
	if t.Key == nil {
		return 0
	}
	e := p.Entity(t.Entity)
	var n int64
	for _, part := range t.Key.Parts() {
		var f *schema.Field
		if e != nil {
			f = e.Field(part.Field)
		}
		if f == nil && t.Fanout != nil {
			// A field of the list a fanout table copies into.
			if te := p.Entity(t.Fanout.Entity); te != nil {
				f = te.Field(part.Field)
			}
		}
		n += KeyPartBytes(part, f)
	}
	if t.Counter != nil && t.Counter.Buckets > 1 {
		n++ // the trailing bucket byte
	}
	return n
}

// ValueBytes is the expected size of the value a column holds: the field's
// size, or for a whole child element the sum of its fields' sizes.
func ValueBytes(e *schema.Entity, c *schema.Column) int64 {
	if e == nil {
		return 0
	}
	if c.Field != "" {
		if f := e.Field(c.Field); f != nil {
			return f.AvgSize()
		}
		return 0
	}
	ch := e.Child(c.Child)
	if ch == nil {
		return 0
	}
	var n int64
	for _, f := range ch.Fields {
		n += f.AvgSize()
	}
	return n
}

// qualifierBytes is the size of a column's real qualifier: as written, or
// for a template the fixed text around the encoded child key.
func qualifierBytes(e *schema.Entity, c *schema.Column) int64 {
	if !c.Template {
		return int64(len(c.Qualifier))
	}
	n := int64(len(c.Prefix) + len(c.Suffix))
	if e == nil {
		return n
	}
	if ch := e.Child(c.Child); ch != nil {
		if f := ch.Field(ch.Key); f != nil {
			n += KeyPartBytes(rowkey.Part{Type: f.Type}, f)
		}
	}
	return n
}

// ColumnShape is the size of one cell of a column (PerRow is left at 1).
func ColumnShape(e *schema.Entity, c *schema.Column) CellShape {
	return CellShape{Family: c.Family, Qualifier: c.Qualifier, QualBytes: qualifierBytes(e, c), ValBytes: ValueBytes(e, c), PerRow: 1}
}

// TableLayout works out one table's shape per logical record.
func TableLayout(p *schema.Plan, t *schema.Table) Layout {
	e := p.Entity(t.Entity)
	l := Layout{Table: t, RowsPerRecord: 1, KeyBytes: KeyBytes(p, t)}
	if t.Each != "" && e != nil {
		if ch := e.Child(t.Each); ch != nil {
			n, typical := childCount(ch)
			l.RowsPerRecord = n
			if !typical {
				l.Assumed = append(l.Assumed, "child list "+ch.Name+" counted at its max; declare typical: for a closer figure")
			}
		}
	}
	if t.Fanout != nil {
		// One copy per element of the target's list.
		l.RowsPerRecord = float64(t.Fanout.Typical)
		if t.Fanout.Typical == t.Fanout.Max {
			l.Assumed = append(l.Assumed, "fanout list "+t.Fanout.Entity+"."+t.Fanout.List+" counted at its max; declare typical: for a closer figure")
		}
	}
	if t.Counter != nil {
		l.Assumed = nil // counterLayout counts the children itself
		counterLayout(p, t, e, &l)
		return l
	}
	for _, c := range t.Columns {
		per := 1.0
		if c.Template && c.Child != "" && c.Child != t.Each && e != nil {
			if ch := e.Child(c.Child); ch != nil {
				n, typical := childCount(ch)
				per = n
				if !typical {
					l.Assumed = append(l.Assumed, "child list "+ch.Name+" counted at its max; declare typical: for a closer figure")
				}
			}
		}
		cs := ColumnShape(e, c)
		cs.PerRow = per
		l.Cells = append(l.Cells, cs)
	}
	if t.Ref != nil {
		// Index and lookup rows carry the primary row key as a value.
		var primary int64
		if pt := p.Primary(t.Entity); pt != nil {
			primary = KeyBytes(p, pt)
		}
		l.Cells = append(l.Cells, CellShape{Family: t.Ref.Family, Qualifier: t.Ref.Qualifier, QualBytes: int64(len(t.Ref.Qualifier)), ValBytes: primary, PerRow: 1})
	}
	if len(l.Cells) == 0 && len(t.Families) > 0 {
		// A row must hold at least one cell to exist.
		l.Cells = append(l.Cells, CellShape{Family: t.Families[0].Name, Qualifier: "", PerRow: 1})
		l.Assumed = append(l.Assumed, "no columns: one empty marker cell per row")
	}
	if t.When != "" {
		share, known := presentShare(p, t)
		l.RowsPerRecord *= share
		if !known {
			l.Assumed = append(l.Assumed, "rows only when "+t.When+" is set, but its distribution is not declared: counted as always set")
		}
	}
	return l
}

// presentShare is the share of records that have a row in a table limited
// by `when`, and whether the workload declared enough to know it.
func presentShare(p *schema.Plan, t *schema.Table) (float64, bool) {
	d := p.Workload.Distribution(t.Entity, t.When)
	known := d != nil && d.Kind == schema.DistWeighted && len(d.Values) > 0
	return p.WhenShare(t), known
}

// textBytes is the typical size of a field written as text.
func textBytes(p rowkey.Part, f *schema.Field) int64 {
	switch p.Type {
	case rowkey.Timestamp:
		return 13
	case rowkey.Int64:
		return 10
	case rowkey.Int32:
		return 6
	case rowkey.Bool:
		return 5
	case rowkey.Float64:
		return 8
	}
	if f != nil {
		return f.AvgSize()
	}
	return schema.DefaultStringSize
}
