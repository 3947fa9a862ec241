package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decoder walks yaml.Nodes, keeping line numbers and collecting errors.
type decoder struct {
	file string
	errs Errors
	// work counts the mapping entries and list items visited. Aliases let a
	// small file name one big node many times; the budget stops such a file
	// from keeping the loader busy for hours.
	work     int
	overflow bool
}

// maxWork is far above what any real schema needs (a few thousand).
const maxWork = 1 << 18

// Upper bounds on the values that size work and memory downstream (cost,
// review, hotspot multiply them together). Each is far beyond any real
// schema, and small enough that products of them stay finite and fit the
// arithmetic that uses them.
const (
	// MaxSize bounds any size (write_buffer, region_max_filesize...): 1 PiB.
	MaxSize = 1 << 50
	// MaxFieldSize bounds a field's size: a KeyValue's lengths are 32-bit
	// and HBase refuses cells far smaller (10 MiB by default).
	MaxFieldSize = 1 << 30
	// MaxChildren bounds a child list's max and typical element counts.
	MaxChildren = 10_000_000
	// MaxRecords bounds entity counts and cardinalities: 10^15.
	MaxRecords = 1_000_000_000_000_000
	// MaxRate bounds a rate: a billion per second.
	MaxRate = 1e9
)

// spend charges n units of work and reports whether the budget allows it.
func (d *decoder) spend(n *yaml.Node, units int) bool {
	d.work += units
	if d.work <= maxWork {
		return true
	}
	if !d.overflow {
		d.overflow = true
		d.errAt(n, "", "the document is too large once its aliases are expanded")
	}
	return false
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func (d *decoder) errLine(line int, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases (bounded, since a hostile file can chain them).
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unknown node"
}

// entry is one key/value pair of a mapping.
type entry struct {
	Key   string
	KeyN  *yaml.Node
	Value *yaml.Node
}

// mapping returns a mapping's entries in file order. Duplicate keys are
// errors; so are keys outside allowed when allowed is not nil. A null value
// (an empty section) is an empty mapping.
func (d *decoder) mapping(n *yaml.Node, path string, allowed ...string) ([]entry, bool) {
	n = resolve(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		d.errAt(n, path, "want a mapping, got %s", kindName(n))
		return nil, false
	}
	if !d.spend(n, len(n.Content)/2+1) {
		return nil, false
	}
	seen := map[string]int{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errAt(n.Content[i], path, "keys must be plain names")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errAt(k, join(path, k.Value), "duplicate key %q (first on line %d)", k.Value, first)
			continue
		}
		seen[k.Value] = k.Line
		if allowed != nil && !contains(allowed, k.Value) {
			d.errAt(k, join(path, k.Value), "unknown key %q (known: %s)", k.Value, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, entry{Key: k.Value, KeyN: k, Value: v})
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) scalar(n *yaml.Node, path, want string) (*yaml.Node, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		if n == nil {
			d.errAt(nil, path, "want %s", want)
		} else {
			d.errAt(n, path, "want %s, got %s", want, kindName(n))
		}
		return nil, false
	}
	return n, true
}

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	s, ok := d.scalar(n, path, "a string")
	if !ok {
		return "", false
	}
	if s.Tag != "!!str" && s.Tag != "!!int" && s.Tag != "!!float" && s.Tag != "!!bool" {
		d.errAt(s, path, "want a string, got %s", s.Tag)
		return "", false
	}
	return s.Value, true
}

// name is a string that must be a plain identifier.
func (d *decoder) name(n *yaml.Node, path string) (string, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	if !isIdent(s) {
		d.errAt(resolve(n), path, "%q is not a name (letters, digits, _ and -, starting with a letter)", s)
		return "", false
	}
	return s, true
}

func isIdent(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		other := (c >= '0' && c <= '9') || c == '-'
		if !letter && !(other && i > 0) {
			return false
		}
	}
	return true
}

func (d *decoder) integer(n *yaml.Node, path string, min, max int64) (int64, bool) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(s.Value, "_", ""), 0, 64)
	if err != nil || s.Tag != "!!int" {
		d.errAt(s, path, "want a whole number, got %q", s.Value)
		return 0, false
	}
	if v < min || v > max {
		d.errAt(s, path, "%d is out of range [%d, %d]", v, min, max)
		return 0, false
	}
	return v, true
}

func (d *decoder) number(n *yaml.Node, path string, min float64) (float64, bool) {
	s, ok := d.scalar(n, path, "a number")
	if !ok {
		return 0, false
	}
	if s.Tag != "!!int" && s.Tag != "!!float" {
		d.errAt(s, path, "want a number, got %q", s.Value)
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s.Value, "_", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errAt(s, path, "want a finite number, got %q", s.Value)
		return 0, false
	}
	if v < min {
		d.errAt(s, path, "%v is below %v", v, min)
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return false, false
	}
	if s.Tag != "!!bool" {
		d.errAt(s, path, "want true or false, got %q", s.Value)
		return false, false
	}
	return s.Value == "true" || s.Value == "True" || s.Value == "TRUE", true
}

func (d *decoder) enum(n *yaml.Node, path string, allowed ...string) (string, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	if !contains(allowed, s) {
		d.errAt(resolve(n), path, "%q is not one of %s", s, strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

// enumFold is enum with case-insensitive matching, returning the canonical
// spelling (HBase settings are upper case but people type them otherwise).
func (d *decoder) enumFold(n *yaml.Node, path string, allowed ...string) (string, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if strings.EqualFold(a, s) {
			return a, true
		}
	}
	d.errAt(resolve(n), path, "%q is not one of %s", s, strings.Join(allowed, ", "))
	return "", false
}

// duration reads Go durations plus a "d" (24h) unit: "2s", "30d", "1d12h".
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.scalar(n, path, "a duration such as 2s or 30d")
	if !ok {
		return 0, false
	}
	v, err := parseDuration(s.Value)
	if err != nil {
		d.errAt(s, path, "%v", err)
		return 0, false
	}
	return v, true
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var days int64
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("duration %q: want a whole number of days before d", s)
		}
		days, s = n, s[i+1:]
	}
	var rest time.Duration
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("duration %q: want a number with a unit (ms, s, m, h, d)", s)
		}
	}
	if rest < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return time.Duration(days)*24*time.Hour + rest, nil
}

// size reads a byte count: 4096, "64KiB", "4MiB", "10GiB", "10GB".
func (d *decoder) size(n *yaml.Node, path string) (int64, bool) {
	s, ok := d.scalar(n, path, "a size such as 64KiB or 4MiB")
	if !ok {
		return 0, false
	}
	v, err := parseSize(s.Value)
	if err != nil {
		d.errAt(s, path, "%v", err)
		return 0, false
	}
	return v, true
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (B, KiB, MiB, GiB, KB, MB, GB)", s)
	}
	if f*float64(mult) > MaxSize {
		return 0, fmt.Errorf("size %q is over the limit of 1 PiB", s)
	}
	return int64(f * float64(mult)), nil
}

// rate reads "2000/s", "30/min", "5/h" or a bare number (per second).
func (d *decoder) rate(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "a rate such as 2000/s")
	if !ok {
		return 0, false
	}
	num, unit, hasUnit := strings.Cut(strings.TrimSpace(s.Value), "/")
	per := 1.0
	if hasUnit {
		switch strings.TrimSpace(unit) {
		case "s", "sec", "second":
		case "min", "m", "minute":
			per = 60
		case "h", "hour":
			per = 3600
		case "d", "day":
			per = 86400
		default:
			d.errAt(s, path, "rate %q: unknown unit %q (want s, min, h or d)", s.Value, unit)
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(num), "_", ""), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errAt(s, path, "rate %q: want a non-negative number, optionally /s, /min, /h or /d", s.Value)
		return 0, false
	}
	if v/per > MaxRate {
		d.errAt(s, path, "rate %q is over the limit of %.0e/s", s.Value, MaxRate)
		return 0, false
	}
	return v / per, true
}

// strList reads a list of strings and the line of each element.
func (d *decoder) strList(n *yaml.Node, path string) ([]string, []int, bool) {
	n = resolve(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil, true
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, path, "want a list, got %s", kindName(n))
		return nil, nil, false
	}
	if !d.spend(n, len(n.Content)+1) {
		return nil, nil, false
	}
	var out []string
	var lines []int
	ok := true
	for i, item := range n.Content {
		s, good := d.str(item, index(path, i))
		if !good {
			ok = false
			continue
		}
		out = append(out, s)
		lines = append(lines, resolve(item).Line)
	}
	return out, lines, ok
}

func lineOf(n *yaml.Node) int {
	if n = resolve(n); n != nil {
		return n.Line
	}
	return 0
}
