package schema

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/rowkey"
)

var queryKeys = []string{"table", "by", "limit", "rate", "latency", "scan", "range", "where", "multi_get", "direction", "profile", "description"}

func (d *decoder) queries(p *Plan, n *yaml.Node) {
	entries, _ := d.mapping(n, "queries")
	for _, e := range entries {
		path := join("queries", e.Key)
		if !isIdent(e.Key) {
			d.errAt(e.KeyN, path, "%q is not a query name", e.Key)
			continue
		}
		p.Queries = append(p.Queries, d.query(p, e, path))
	}
}

func (d *decoder) query(p *Plan, e entry, path string) *Query {
	q := &Query{Name: e.Key, Line: e.KeyN.Line, Lines: Lines{}}
	attrs, _ := d.mapping(e.Value, path, queryKeys...)
	nodes := map[string]*yaml.Node{}
	for _, a := range attrs {
		q.Lines[a.Key] = a.KeyN.Line
		nodes[a.Key] = a.Value
		sp := join(path, a.Key)
		switch a.Key {
		case "table":
			q.Table, _ = d.str(a.Value, sp)
		case "limit":
			if v, ok := d.integer(a.Value, sp, 1, 1<<31-1); ok {
				q.Limit = int(v)
			}
		case "rate":
			q.Rate, _ = d.rate(a.Value, sp)
		case "latency":
			q.Latency, _ = d.duration(a.Value, sp)
		case "scan":
			if v, ok := d.enum(a.Value, sp, "full", "key"); ok {
				q.FullScan = v == "full"
			}
		case "multi_get":
			if v, ok := d.integer(a.Value, sp, 1, 1<<20); ok {
				q.MultiGet = int(v)
			}
		case "direction":
			q.Direction, _ = d.enum(a.Value, sp, DirectionForward, DirectionReverse)
		case "profile":
			q.Profile, _ = d.name(a.Value, sp)
		case "description":
			d.str(a.Value, sp)
		}
	}
	if q.Table == "" {
		if _, ok := nodes["table"]; !ok {
			d.errLine(q.Line, path, "query %q names no table", q.Name)
		}
		return q
	}
	t := p.Table(q.Table)
	if t == nil {
		d.errLine(q.Lines["table"], join(path, "table"), "unknown table %q", q.Table)
		return q
	}
	ent := p.Entity(t.Entity)
	if ent == nil {
		return q // the table's own error says why
	}
	td := &tableDecl{t: t, ent: ent, fanList: fanoutList(p, t)}
	var byLines []int
	if n, ok := nodes["by"]; ok {
		var by []string
		by, byLines, _ = d.strList(n, join(path, "by"))
		by, byLines = rejoinCalls(by, byLines)
		for i, f := range by {
			at := index(join(path, "by"), i)
			if strings.Contains(f, "(") {
				// A key part written as in the rowkey ("day(placedAt)")
				// means the field it reads.
				part, err := rowkey.ParsePart(f)
				if err != nil {
					d.errLine(byLines[i], at, "%v", err)
					continue
				}
				f = part.Field
			}
			if d.field(td, f, byLines[i], at) == nil {
				continue
			}
			if contains(q.By, f) {
				d.errLine(byLines[i], at, "%q is listed twice", f)
				continue
			}
			q.By = append(q.By, f)
		}
	}
	if n, ok := nodes["range"]; ok {
		q.Range = d.queryRange(td, n, join(path, "range"))
	}
	if n, ok := nodes["where"]; ok {
		q.Where = d.wherePredicates(td, n, join(path, "where"))
	}
	if q.MultiGet > 0 && q.FullScan {
		d.errLine(q.Lines["multi_get"], join(path, "multi_get"), "a multi-get reads keys, not the whole table (scan: full)")
	}
	if t.Key == nil {
		return q
	}
	// Equality predicates fix key parts as the caller's fields do; those
	// that fix nothing stay in Bound.Unused as filters.
	bind := append([]string(nil), q.By...)
	for _, w := range q.Where {
		if !contains(bind, w.Field) {
			bind = append(bind, w.Field)
		}
	}
	q.Bound = t.Key.BindFields(bind)
	if q.Range != nil && q.Bound.Parts < t.Key.Len() && !q.FullScan {
		q.Range.OnKey = t.Key.Part(q.Bound.Parts).Field == q.Range.Field
	}
	switch {
	case q.FullScan:
		q.Shape = ShapeFull
	case q.Bound.Parts == 0 && q.Range != nil && q.Range.OnKey:
		q.Shape = ShapeRange
	case q.Bound.Parts == 0:
		q.Shape = ShapeFull
	case q.Bound.Full && q.Bound.FanOut == 1 && (t.Counter == nil || t.Counter.Buckets == 1):
		q.Shape = ShapeGet
	default:
		q.Shape = ShapePrefix
	}
	return q
}

func (d *decoder) queryRange(td *tableDecl, n *yaml.Node, path string) *Range {
	r := &Range{Line: lineOf(n)}
	attrs, _ := d.mapping(n, path, "field", "last", "calendar", "from", "to")
	for _, a := range attrs {
		sp := join(path, a.Key)
		switch a.Key {
		case "field":
			name, ok := d.str(a.Value, sp)
			if !ok {
				continue
			}
			f := d.field(td, name, lineOf(a.Value), sp)
			if f == nil {
				continue
			}
			if !f.Type.Numeric() && f.Type != rowkey.Timestamp {
				d.errAt(resolve(a.Value), sp, "a range needs a timestamp or number field; %q is %v", name, f.Type)
				continue
			}
			r.Field = name
		case "last":
			r.Last, _ = d.duration(a.Value, sp)
		case "calendar":
			r.Calendar, _ = d.enum(a.Value, sp, calendars...)
		case "from":
			r.From, r.HasFrom = d.instant(a.Value, sp)
		case "to":
			r.To, r.HasTo = d.instant(a.Value, sp)
		}
	}
	kinds := 0
	for _, set := range []bool{r.Last > 0, r.Calendar != "", r.HasFrom || r.HasTo} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		d.errLine(r.Line, path, "a range is one of last, calendar, or from/to")
	}
	if r.HasFrom && r.HasTo && r.To <= r.From {
		d.errLine(r.Line, path, "range to is not after from")
	}
	if r.Field == "" {
		d.errLine(r.Line, path, "a range names its field (field: ...)")
		return nil
	}
	return r
}
