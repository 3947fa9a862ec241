package schema

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/denorm/denorm/rowkey"
)

func (d *decoder) counter(td *tableDecl) []*Add {
	t := td.t
	t.Counter = &Counter{Buckets: 1}
	if n, ok := td.nodes["buckets"]; ok {
		if v, ok := d.integer(n, join(td.path, "buckets"), 1, rowkey.MaxSaltBuckets); ok {
			t.Counter.Buckets = int(v)
		}
	}
	if n, ok := td.nodes["mode"]; ok {
		if v, ok := d.enum(n, join(td.path, "mode"), string(CounterFast), string(CounterExact), string(CounterBounded)); ok {
			t.Counter.Mode = CounterMode(v)
		}
	}
	n, ok := td.nodes["add"]
	if !ok {
		d.errLine(t.Line, td.path, "counter table %q adds nothing (add: {family:qualifier: field})", t.Name)
		return nil
	}
	at := join(td.path, "add")
	entries, _ := d.mapping(n, at)
	for _, e := range entries {
		cp := join(at, e.Key)
		fam, qual, ok := strings.Cut(e.Key, ":")
		if !ok || !isIdent(fam) || strings.ContainsAny(qual, "{}") {
			d.errAt(e.KeyN, cp, "%q is not family:qualifier", e.Key)
			continue
		}
		a := &Add{Family: fam, Qualifier: qual, Line: e.KeyN.Line}
		v := resolve(e.Value)
		if v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
			c, err := strconv.ParseInt(v.Value, 0, 64)
			if err != nil {
				d.errAt(v, cp, "%q is not a whole number", v.Value)
				continue
			}
			a.Const = c
		} else {
			name, ok := d.str(e.Value, cp)
			if !ok {
				continue
			}
			f := d.field(td, name, lineOf(e.Value), cp)
			if f == nil {
				continue
			}
			if !f.Type.Integer() {
				d.errAt(v, cp, "a counter adds numbers; %q is %v (want int32 or int64)", name, f.Type)
				continue
			}
			a.Field = name
		}
		t.Counter.Adds = append(t.Counter.Adds, a)
	}
	if len(entries) == 0 {
		d.errAt(resolve(n), at, "counter table %q adds nothing", t.Name)
	}
	return t.Counter.Adds
}
