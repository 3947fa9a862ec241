package schema

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/rowkey"
)

// Predicate is an equality test a query applies to a field, usually one the
// row key does not order (`where: {alert: true}`): the rows of the scan
// that fail it are read and thrown away, which is what review prices.
type Predicate struct {
	Field string
	Value string // as written; checked against the field's type
	Line  int
}

// Calendar windows a range may name instead of a duration. Each is read as
// the period that contains now, so "today" is at most one day of rows.
const (
	CalendarToday     = "today"
	CalendarYesterday = "yesterday"
	CalendarThisWeek  = "this_week"
	CalendarThisMonth = "this_month"
	CalendarThisYear  = "this_year"
)

var calendars = []string{CalendarToday, CalendarYesterday, CalendarThisWeek, CalendarThisMonth, CalendarThisYear}

// calendarSpan is the longest a calendar window can be; estimates of rows
// read use it, so they err on the side of more rows.
func calendarSpan(c string) time.Duration {
	const day = 24 * time.Hour
	switch c {
	case CalendarToday, CalendarYesterday:
		return day
	case CalendarThisWeek:
		return 7 * day
	case CalendarThisMonth:
		return 31 * day
	case CalendarThisYear:
		return 366 * day
	}
	return 0
}

// Window is how much of the range field's axis the range covers: the last
// duration, the calendar period, or To - From. 0 when none is known (a
// range given by its field alone).
func (r *Range) Window() time.Duration {
	switch {
	case r.Last > 0:
		return r.Last
	case r.Calendar != "":
		return calendarSpan(r.Calendar)
	case r.HasFrom && r.HasTo && r.To > r.From:
		return time.Duration(r.To-r.From) * time.Millisecond
	}
	return 0
}

// Scan directions.
const (
	DirectionForward = "forward"
	DirectionReverse = "reverse"
)

// wherePredicates reads `where: {field: value, ...}`.
func (d *decoder) wherePredicates(td *tableDecl, n *yaml.Node, path string) []*Predicate {
	entries, _ := d.mapping(n, path)
	var out []*Predicate
	for _, e := range entries {
		sp := join(path, e.Key)
		f := d.field(td, e.Key, e.KeyN.Line, sp)
		if f == nil {
			continue
		}
		v, ok := d.scalar(e.Value, sp, "a value")
		if !ok {
			continue
		}
		if err := checkLiteral(f.Type, v.Value); err != nil {
			d.errAt(v, sp, "%q is not a %v: %v", v.Value, f.Type, err)
			continue
		}
		out = append(out, &Predicate{Field: f.Path, Value: v.Value, Line: e.KeyN.Line})
	}
	return out
}

// checkLiteral checks that a written value can be a value of type t.
func checkLiteral(t rowkey.Type, s string) error {
	var err error
	switch t {
	case rowkey.Bool:
		_, err = strconv.ParseBool(s)
	case rowkey.Int32:
		_, err = strconv.ParseInt(s, 10, 32)
	case rowkey.Int64:
		_, err = strconv.ParseInt(s, 10, 64)
	case rowkey.Float64:
		_, err = strconv.ParseFloat(s, 64)
	case rowkey.Timestamp:
		_, err = parseInstant(s)
	}
	return err
}

// parseInstant reads an absolute time: RFC 3339, a date (2025-11-30, UTC
// midnight), or milliseconds since the epoch.
func parseInstant(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UnixMilli(), nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

// instant reads a range bound.
func (d *decoder) instant(n *yaml.Node, path string) (int64, bool) {
	v, ok := d.scalar(n, path, "a time (RFC 3339, a date, or epoch milliseconds)")
	if !ok {
		return 0, false
	}
	ms, err := parseInstant(v.Value)
	if err != nil {
		d.errAt(v, path, "%q is not a time: want RFC 3339 (2025-11-30T00:00:00Z), a date (2025-11-30) or epoch milliseconds", v.Value)
		return 0, false
	}
	return ms, true
}
