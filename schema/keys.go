package schema

import (
	"strings"

	"github.com/denorm/denorm/rowkey"
)

func (d *decoder) rowkey(td *tableDecl) {
	t, at := td.t, join(td.path, "rowkey")
	n, ok := td.nodes["rowkey"]
	if !ok {
		d.errLine(t.Line, td.path, "table %q has no rowkey", t.Name)
		return
	}
	exprs, lines, _ := d.strList(n, at)
	exprs, lines = rejoinCalls(exprs, lines)
	if len(exprs) == 0 {
		d.errAt(resolve(n), at, "the rowkey has no parts")
		return
	}
	var parts []rowkey.Part
	good := true
	for i, x := range exprs {
		part, err := rowkey.ParsePart(x)
		if err != nil {
			d.errLine(lines[i], index(at, i), "%v", err)
			good = false
			continue
		}
		f := d.field(td, part.Field, lines[i], index(at, i))
		if f == nil {
			good = false
			continue
		}
		part.Type = f.Type
		// A hash of several fields types each of them the same way.
		err = part.TypeMore(func(name string) (rowkey.Type, bool) {
			mf := d.field(td, name, lines[i], index(at, i))
			if mf == nil {
				return 0, false
			}
			return mf.Type, true
		})
		if err != nil {
			good = false
			continue
		}
		parts = append(parts, part)
	}
	if !good {
		return
	}
	spec, err := rowkey.NewSpec(parts)
	if err != nil {
		d.errLine(lines[0], at, "%v", err)
		return
	}
	t.Key, t.KeyLines = spec, lines
}

// rejoinCalls undoes YAML's split of an unquoted call in a flow list:
// [salt(orderId, 8), status] reads as "salt(orderId", "8)", "status".
func rejoinCalls(exprs []string, lines []int) ([]string, []int) {
	var outE []string
	var outL []int
	for i := 0; i < len(exprs); i++ {
		e := exprs[i]
		// hash(a, b, 2) splits into three pieces, the middle one with no
		// parenthesis at all.
		for strings.Count(e, "(") > strings.Count(e, ")") && i+1 < len(exprs) && lines[i+1] == lines[i] &&
			!strings.Contains(exprs[i+1], "(") {
			i++
			e += ", " + exprs[i]
		}
		outE = append(outE, e)
		outL = append(outL, lines[i])
	}
	return outE, outL
}
