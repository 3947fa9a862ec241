package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// rowDecoder reads a table's rows back into what the schema says they
// hold: key parts by name, template qualifiers as their child key, cell
// values in their declared types. It never fails a row: what does not
// decode is reported in the part or cell it concerns, and the raw bytes are
// always printed beside it.
type rowDecoder struct {
	plan    *schema.Plan
	t       *schema.Table
	ent     *schema.Entity
	primary *schema.Table // where index and lookup refs point
}

func newRowDecoder(plan *schema.Plan, table string) (*rowDecoder, error) {
	t := plan.Table(table)
	if t == nil {
		var names []string
		for _, t := range plan.Tables {
			names = append(names, t.Name)
		}
		return nil, usageErrorf("--schema %s has no table %q (it has %s)", plan.File, table, strings.Join(names, ", "))
	}
	ent := plan.Entity(t.Entity)
	if ent == nil {
		return nil, usageErrorf("--schema %s: table %s names no known entity", plan.File, table)
	}
	return &rowDecoder{plan: plan, t: t, ent: ent, primary: plan.Primary(ent.Name)}, nil
}

// keyPart is one part of a decoded row key.
type keyPart struct {
	Part  string `json:"part"`  // the expression as written: reverse(placedAt), salt(orderId, 8); "bucket" for a counter's bucket byte
	Name  string `json:"name"`  // the field (placedAt), or salt, hash, day, bucket
	Kind  string `json:"kind"`  // salt, hash, day, reverse, bucket, or the field's type: string, int32, int64, timestamp, ...
	Value any    `json:"value"` // JSON-ready: timestamps and days as RFC 3339 text, hashes and bytes as hex
	// Field and Type are the field the part is computed from and its
	// declared type; empty for a bucket.
	Field string `json:"field,omitempty"`
	Type  string `json:"type,omitempty"`
}

// decodedKey is a row key read back; Rest counts bytes no part took (a
// lookup table's reference row holds only the key's first parts).
type decodedKey struct {
	Parts []keyPart `json:"parts"`
	Error string    `json:"error,omitempty"`
}

func (k decodedKey) text() string {
	if k.Error != "" && len(k.Parts) == 0 {
		return "?"
	}
	out := make([]string, 0, len(k.Parts)+1)
	for _, p := range k.Parts {
		out = append(out, p.Name+"="+cellText(p.Value))
	}
	if k.Error != "" {
		out = append(out, "?")
	}
	return strings.Join(out, " ")
}

func (d *rowDecoder) key(row []byte) decodedKey {
	spec, key := d.t.Key, row
	bucket := -1
	if d.t.Counter != nil && d.t.Counter.Buckets > 1 {
		k, ok := layout.CounterKey(d.t, row)
		if !ok {
			return decodedKey{Error: "counter row too short for its bucket byte"}
		}
		key, bucket = k, int(row[len(row)-1])
	}
	dk := decodeKey(spec, key)
	if bucket >= 0 {
		dk.Parts = append(dk.Parts, keyPart{Part: "bucket", Name: "bucket", Kind: "bucket", Value: bucket})
	}
	return dk
}

// decodeKey reads a key of spec, or as many of its first parts as the key
// holds.
func decodeKey(spec *rowkey.Spec, key []byte) decodedKey {
	parts, err := spec.Decode(key)
	dk := decodedKey{}
	if err != nil {
		var rest int
		var perr error
		parts, rest, perr = spec.DecodePrefix(key)
		switch {
		case perr != nil:
			dk.Error = perr.Error()
		case rest > 0:
			dk.Error = fmt.Sprintf("%d bytes after the last whole part of %s", rest, spec)
		case len(parts) == spec.Len():
			dk.Error = err.Error() // whole but inconsistent: a salt, hash or day that does not match
		}
	}
	for _, p := range parts {
		dk.Parts = append(dk.Parts, partOf(p))
	}
	return dk
}

func partOf(d rowkey.Decoded) keyPart {
	p := keyPart{Part: d.Part.Expr, Name: d.Part.Field, Field: d.Part.Field, Type: d.Part.Type.String()}
	switch d.Part.Func {
	case rowkey.Salt:
		p.Name, p.Kind, p.Value = "salt", "salt", d.Value
	case rowkey.Hash:
		p.Name, p.Kind, p.Value = "hash", "hash", hex.EncodeToString(d.Value.([]byte))
	case rowkey.Day:
		p.Name, p.Kind = "day", "day"
		p.Value = time.UnixMilli(d.Value.(int64)).UTC().Format(time.DateOnly)
	case rowkey.Reverse:
		p.Kind, p.Value = "reverse", jsonValue(d.Part.Type, d.Value)
	default:
		p.Kind, p.Value = d.Part.Type.String(), jsonValue(d.Part.Type, d.Value)
	}
	return p
}

// decodedCell is what one cell holds by the schema.
type decodedCell struct {
	// Column is the schema's column as written ("d:s", "i:{line}", "c:u"),
	// or what the writer keeps there: "ref", "pending", "tombstone",
	// "live", "source".
	Column string `json:"column"`
	Kind   string `json:"kind"` // field, element, ref, counter, counter-state, counted, live, source, pending, tombstone, refstate, reffanned, unknown
	Field  string `json:"field,omitempty"`
	// ChildKey names the element of a template column ({"line": 2});
	// Entity the contributor of an exact counter cell; Ref the referenced
	// entity of a live copy.
	ChildKey map[string]any `json:"child_key,omitempty"`
	Entity   map[string]any `json:"entity,omitempty"`
	Ref      map[string]any `json:"ref,omitempty"`
	// Value in the declared type: an element as an object of its fields,
	// a counter as a number, a ref as the parts of the key it points at.
	Value any    `json:"value"`
	Error string `json:"error,omitempty"`

	order []string // element fields in schema order, for text
}

// label is the column as text shows it: d:s (status), i:{line=2} (items).
func (c decodedCell) label() string {
	col := c.Column
	if len(c.ChildKey) > 0 {
		if i := strings.IndexByte(col, '{'); i >= 0 {
			if j := strings.IndexByte(col[i:], '}'); j >= 0 {
				col = col[:i] + "{" + cellTextMap(c.ChildKey, nil) + "}" + col[i+j+1:]
			}
		}
	}
	var more []string
	if c.Field != "" && c.Kind != "ref" {
		more = append(more, c.Field)
	}
	if c.Kind == "ref" {
		more = append(more, "to "+c.Field)
	}
	if len(c.Entity) > 0 {
		more = append(more, "from "+cellTextMap(c.Entity, nil))
	}
	if len(c.Ref) > 0 {
		more = append(more, "of "+cellTextMap(c.Ref, nil))
	}
	if len(more) > 0 {
		col += " (" + strings.Join(more, " ") + ")"
	}
	return col
}

func (c decodedCell) text() string {
	if c.Error != "" {
		return "? " + c.Error
	}
	if m, ok := c.Value.(map[string]any); ok {
		return "{" + cellTextMap(m, c.order) + "}"
	}
	if k, ok := c.Value.(decodedKey); ok {
		return k.text()
	}
	return cellText(c.Value)
}

func (d *rowDecoder) cell(c store.Cell) decodedCell {
	t := d.t
	book := t.Families[0].Name
	if c.Family == book {
		if t.Ref != nil && string(c.Qualifier) == schema.RefQualifier {
			out := decodedCell{Column: "ref", Kind: "ref"}
			if d.primary == nil {
				out.Value = store.Printable(c.Value)
				return out
			}
			out.Field = d.primary.Name
			dk := decodeKey(d.primary.Key, c.Value)
			if dk.Error != "" {
				out.Error = dk.Error
			}
			out.Value = dk
			return out
		}
		if t.Role == schema.RolePrimary && bytes.Equal(c.Qualifier, layout.QualPending) {
			out := decodedCell{Column: "pending", Kind: "pending"}
			refs, at, err := layout.DecodePending(c.Value)
			if err != nil {
				out.Error = err.Error()
				return out
			}
			list := []string{}
			for _, r := range refs {
				list = append(list, r.Table+" "+store.Printable(r.Row))
			}
			v := map[string]any{"refs": list}
			if at != nil {
				// Where the event that wrote the version was in its log.
				v["stream"], v["offset"] = fmt.Sprintf("%016x", at.Stream), at.Offset
			}
			out.Value = v
			return out
		}
		if t.Role == schema.RolePrimary && bytes.Equal(c.Qualifier, layout.QualTombstone) {
			return decodedCell{Column: "tombstone", Kind: "tombstone", Value: "deleted"}
		}
		if t.Role == schema.RolePrimary && bytes.Equal(c.Qualifier, layout.QualCounted) {
			return countedCell(c)
		}
		if t.Role == schema.RoleLocator {
			return d.locatorCell(c)
		}
		if t.Role == schema.RoleLookup && bytes.Equal(c.Qualifier, layout.QualRefState) {
			state := "upserted"
			if len(c.Value) == 1 && c.Value[0] == layout.RefDeleted {
				state = "deleted"
			}
			return decodedCell{Column: "reference state", Kind: "refstate", Value: state}
		}
		if t.Role == schema.RoleLookup && bytes.Equal(c.Qualifier, layout.QualRefFanned) {
			// Its timestamp is the version whose fan-out ran to its end.
			return decodedCell{Column: "reference fanned out", Kind: "reffanned", Value: c.Timestamp}
		}
		if layout.IsLive(c.Qualifier) {
			if t.Role == schema.RolePrimary {
				return d.liveCell(c)
			}
			if t.Role == schema.RoleLookup {
				return d.sourceCell(c)
			}
		}
	}
	if t.Counter != nil {
		return d.counterCell(c)
	}
	for _, col := range t.Columns {
		if col.Family != c.Family {
			continue
		}
		if !col.Template {
			if string(c.Qualifier) != col.Qualifier {
				continue
			}
			return d.fieldCell(col, col.Field, d.ent.Field(col.Field), c.Value)
		}
		key, ok := col.ChildKeyOf(d.plan, d.ent.Name, c.Qualifier)
		if !ok {
			continue
		}
		ch := d.ent.Child(col.Child)
		ck := map[string]any{ch.Key: jsonValue(ch.Field(ch.Key).Type, key)}
		if col.Field == "" {
			out := decodedCell{Column: col.Name(), Kind: "element", Field: ch.Name, ChildKey: ck}
			el, err := layout.DecodeElement(ch, c.Value)
			if err != nil {
				out.Error = err.Error()
				return out
			}
			m := make(map[string]any, len(el))
			for _, f := range ch.Fields {
				if v, ok := el[f.Name]; ok {
					m[f.Name] = jsonValue(f.Type, v)
					out.order = append(out.order, f.Name)
				}
			}
			out.Value = m
			return out
		}
		out := d.fieldCell(col, col.Field, d.ent.Field(col.Field), c.Value)
		out.ChildKey = ck
		return out
	}
	return decodedCell{Column: c.Family + ":" + store.Printable(c.Qualifier), Kind: "unknown", Value: store.Printable(c.Value)}
}

func (d *rowDecoder) fieldCell(col *schema.Column, path string, f *schema.Field, b []byte) decodedCell {
	out := decodedCell{Column: col.Name(), Kind: "field", Field: path}
	if f == nil {
		out.Error = fmt.Sprintf("no field %s in entity %s", path, d.ent.Name)
		return out
	}
	v, err := layout.DecodeValue(f.Type, b)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Value = jsonValue(f.Type, v)
	return out
}

// counterCell: the bare qualifier holds a total (fast mode); in exact mode
// the qualifier, a zero byte and the contributing entity's key hold that
// entity's share.
func (d *rowDecoder) counterCell(c store.Cell) decodedCell {
	if layout.IsCounterState(c.Qualifier) {
		return counterStateCell(c)
	}
	for _, a := range d.t.Counter.Adds {
		if a.Family != c.Family || !bytes.HasPrefix(c.Qualifier, []byte(a.Qualifier)) {
			continue
		}
		rest := c.Qualifier[len(a.Qualifier):]
		if len(rest) > 0 && rest[0] != 0 {
			continue
		}
		out := decodedCell{Column: a.Family + ":" + a.Qualifier, Kind: "counter", Field: a.Field}
		if len(rest) > 0 {
			ent, err := d.entityKey(rest[1:])
			if err != nil {
				out.Error = err.Error()
				return out
			}
			out.Entity = ent
		}
		n, err := layout.CellInt64(c.Value)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		out.Value = n
		return out
	}
	return decodedCell{Column: c.Family + ":" + store.Printable(c.Qualifier), Kind: "unknown", Value: store.Printable(c.Value)}
}

// entityKey reads an entity's key fields in order (layout.EntityKey).
func (d *rowDecoder) entityKey(b []byte) (map[string]any, error) {
	out := map[string]any{}
	for _, k := range d.ent.Key {
		f := d.ent.Field(k)
		if f == nil {
			return nil, fmt.Errorf("entity %s has no key field %s", d.ent.Name, k)
		}
		v, rest, err := rowkey.DecodeValue(f.Type, b)
		if err != nil {
			return nil, fmt.Errorf("entity key %s: %w", store.Printable(b), err)
		}
		out[k] = jsonValue(f.Type, v)
		b = rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("entity key: %d bytes after its last field", len(b))
	}
	return out, nil
}

// liveCell reads a live copy: 0x01, reference name, 0x00, the encoded
// reference key, 0x00, the referenced field (layout.LiveQualifier).
func (d *rowDecoder) liveCell(c store.Cell) decodedCell {
	out := decodedCell{Column: "live", Kind: "live"}
	q := c.Qualifier[1:]
	i := bytes.IndexByte(q, 0)
	if i < 0 {
		out.Error = "live copy qualifier without a reference name"
		return out
	}
	var ref *schema.Reference
	for _, r := range d.ent.References {
		if r.Name == string(q[:i]) {
			ref = r
		}
	}
	if ref == nil {
		out.Error = fmt.Sprintf("live copy of unknown reference %q", q[:i])
		return out
	}
	kf, target := d.ent.Field(ref.Key), d.plan.Entity(ref.Entity)
	if kf == nil || target == nil {
		out.Error = fmt.Sprintf("reference %s: key field or entity missing", ref.Name)
		return out
	}
	key, rest, err := rowkey.DecodeValue(kf.Type, q[i+1:])
	if err != nil || len(rest) == 0 || rest[0] != 0 {
		out.Error = fmt.Sprintf("reference %s: bad key in live copy qualifier", ref.Name)
		return out
	}
	from := string(rest[1:])
	out.Ref = map[string]any{ref.Name: jsonValue(kf.Type, key)}
	out.Field = from
	for _, cp := range ref.Copies {
		if cp.From == from {
			out.Field = cp.Field // the local field the copy fills, e.g. items.name
		}
	}
	f := target.Field(from)
	if f == nil {
		out.Error = fmt.Sprintf("entity %s has no field %s", target.Name, from)
		return out
	}
	v, err := layout.DecodeValue(f.Type, c.Value)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Value = jsonValue(f.Type, v)
	return out
}

// locatorCell reads a locator cell: a primary row the entity may live in
// (its key decoded by the primary table's parts), or its last delete.
func (d *rowDecoder) locatorCell(c store.Cell) decodedCell {
	if bytes.Equal(c.Qualifier, layout.QualTombstone) {
		return decodedCell{Column: "tombstone", Kind: "tombstone", Value: "deleted"}
	}
	at, _ := layout.ReadLocation(d.t, store.Row{Cells: []store.Cell{c}})
	if len(at) != 1 || d.primary == nil {
		return decodedCell{Column: c.Family + ":" + store.Printable(c.Qualifier), Kind: "unknown", Value: store.Printable(c.Value)}
	}
	out := decodedCell{Column: "location", Kind: "location", Field: d.primary.Name}
	dk := decodeKey(d.primary.Key, at[0].Key)
	if dk.Error != "" {
		out.Error = dk.Error
	}
	out.Value = dk
	return out
}

// sourceCell reads a lookup table's latest copy of a referenced field:
// 0x01 and the field name (layout.SourceQualifier).
func (d *rowDecoder) sourceCell(c store.Cell) decodedCell {
	from := string(c.Qualifier[1:])
	out := decodedCell{Column: "source", Kind: "source", Field: from}
	var target *schema.Entity
	for _, r := range d.ent.References {
		if r.Name == d.t.Reference {
			target = d.plan.Entity(r.Entity)
		}
	}
	var f *schema.Field
	if target != nil {
		f = target.Field(from)
	}
	if f == nil {
		out.Error = fmt.Sprintf("reference %s copies no field %s", d.t.Reference, from)
		return out
	}
	v, err := layout.DecodeValue(f.Type, c.Value)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Value = jsonValue(f.Type, v)
	return out
}

// jsonValue gives a value a form that reads the same in text and JSON:
// timestamps as RFC 3339 UTC, bytes as hex, floats that JSON cannot carry
// as text.
func jsonValue(t rowkey.Type, v any) any {
	switch x := v.(type) {
	case int64:
		if t == rowkey.Timestamp {
			return time.UnixMilli(x).UTC().Format(time.RFC3339Nano)
		}
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return v
}

// textValue prints a value for people: strings as they are unless they
// hold spaces, quotes or unprintable bytes (then quoted).
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return "(none)"
	case string:
		if x != "" && utf8.ValidString(x) && !strings.ContainsAny(x, " \"=") && isPrintableText(x) {
			return x
		}
		return strconv.Quote(x)
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case decodedKey:
		return x.text()
	}
	return fmt.Sprint(v)
}

func isPrintableText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// textMap prints k=v pairs, in order when given, else sorted.
func cellTextMap(m map[string]any, order []string) string {
	if order == nil {
		for k := range m {
			order = append(order, k)
		}
		slices.Sort(order)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+cellText(m[k]))
	}
	return strings.Join(out, " ")
}

// decodeFlags are get's and scan's --schema and --raw.
type decodeFlags struct {
	schema string
	raw    bool
}

func addDecodeFlags(cmd *cobra.Command, f *decodeFlags) {
	cmd.Flags().StringVar(&f.schema, "schema", "", "schema file: print keys by their parts and values in their declared types")
	cmd.Flags().BoolVar(&f.raw, "raw", false, "with --schema: print keys and values as stored, as without it")
}

// decoder is nil when rows print as stored.
func (f decodeFlags) decoder(table string) (*rowDecoder, error) {
	if f.schema == "" || f.raw {
		return nil, nil
	}
	plan, err := loadSchema(f.schema)
	if err != nil {
		return nil, err
	}
	return newRowDecoder(plan, table)
}

// schemaReadHelp is the --help paragraph get and scan share on --schema.
const schemaReadHelp = `--schema FILE reads the table as the schema declares it: each row's key is
printed once, by its parts (customerId=c1 placedAt=2026-10-01T05:34:58Z
orderId=o9; a salt as salt=N, a hash as hash=HEX, a day as day=DATE and a
counter's bucket byte as bucket=N), template qualifiers as their child key
(i:{line=2}), and values in their declared types: items as their fields,
counters as numbers, an index's or lookup's ref as the primary key it points
at. --format json then adds a "decoded" object to each row (key parts: part,
name, kind, field, type, value) and to each cell (column, kind, field,
child_key, entity, value), beside the raw fields. --raw prints the stored
form, as without --schema.`

// counterStateCell shows a bounded counter row's state cell (a stream's
// part, or the base cell): its totals,
// and per log stream (by id) how far the row has counted it.
func counterStateCell(c store.Cell) decodedCell {
	out := decodedCell{Column: "counter state", Kind: "counter-state"}
	if s, ok := layout.CounterPartStream(c.Qualifier); ok {
		out.Column = fmt.Sprintf("counter state of stream %016x", s)
	}
	st, err := layout.DecodeCounterState(c.Value)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	totals := map[string]int64{}
	for _, t := range st.Totals {
		totals[t.Family+":"+string(t.Qualifier)] = t.Value
	}
	var streams []string
	for _, q := range st.Seqs {
		streams = append(streams, fmt.Sprintf("%016x@%d settled %d", q.Stream, q.Offset, q.Settled))
	}
	out.Value = map[string]any{"totals": totals, "streams": streams}
	return out
}

// countedCell shows an entity's Counted record: what bounded counters hold
// of it (base until the row's sequence reaches the offset, then now).
func countedCell(c store.Cell) decodedCell {
	out := decodedCell{Column: "counted", Kind: "counted"}
	rec, err := layout.DecodeCounted(c.Value)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	var counts []string
	for _, x := range rec.Counts {
		counts = append(counts, fmt.Sprintf("%s %s %s:%s base %d now %d", x.Table, store.Printable(x.Row), x.Family, store.Printable(x.Qualifier), x.Base, x.Now))
	}
	out.Value = map[string]any{"stream": fmt.Sprintf("%016x", rec.Stream), "offset": rec.Offset, "counts": counts}
	return out
}
