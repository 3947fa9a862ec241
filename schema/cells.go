package schema

import (
	"bytes"
	"fmt"

	"github.com/denorm/denorm/rowkey"
)

// The byte layouts below are shared by the writer, the reader, the
// reconcile job and the cost model; they live here so that all agree.

// QualifierFor builds the qualifier of a template column for one child
// element: Prefix, the child key in its order-preserving encoding, Suffix.
// Elements therefore sort by their key within the row. A plain column's
// qualifier is returned as is.
func (c *Column) QualifierFor(p *Plan, entity string, childKey any) ([]byte, error) {
	if !c.Template {
		return []byte(c.Qualifier), nil
	}
	return c.AppendQualifier(nil, p, entity, childKey)
}

// AppendQualifier appends the qualifier QualifierFor builds to dst. The
// writer derives a qualifier for every element of every state: appended to
// a buffer it already holds, a qualifier costs no allocation of its own.
func (c *Column) AppendQualifier(dst []byte, p *Plan, entity string, childKey any) ([]byte, error) {
	if !c.Template {
		return append(dst, c.Qualifier...), nil
	}
	t, err := c.keyType(p, entity)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	q := append(dst, c.Prefix...)
	if q, err = rowkey.AppendValue(q, t, childKey); err != nil {
		return dst, fmt.Errorf("schema: qualifier of %s: %w", c.Name(), err)
	}
	if c.Prefix == "" && len(q) > start && q[start] <= QualifierEscape {
		// Qualifiers from 0x00 to 0x02 are the writer's (bookkeeping and
		// live copies); an encoded key starting there is escaped. The
		// escape keeps the order: the keys it moves sort first anyway.
		q = append(q, 0)
		copy(q[start+1:], q[start:len(q)-1])
		q[start] = QualifierEscape
	}
	return append(q, c.Suffix...), nil
}

// QualifierEscape starts a template qualifier whose encoded child key
// begins with a byte up to itself. Schema qualifiers never start with 0x00
// or 0x01, the first bytes of the writer's own cells (bookkeeping and live
// copies), nor with this byte unescaped: plain qualifiers and template
// prefixes that do are refused at load.
const QualifierEscape = 0x02

// ChildKeyOf reads the child key back from a template column's qualifier;
// ok is false when the qualifier does not belong to the column.
func (c *Column) ChildKeyOf(p *Plan, entity string, qualifier []byte) (key any, ok bool) {
	if !c.Template || !bytes.HasPrefix(qualifier, []byte(c.Prefix)) || !bytes.HasSuffix(qualifier, []byte(c.Suffix)) ||
		len(qualifier) < len(c.Prefix)+len(c.Suffix) {
		return nil, false
	}
	t, err := c.keyType(p, entity)
	if err != nil {
		return nil, false
	}
	mid := qualifier[len(c.Prefix) : len(qualifier)-len(c.Suffix)]
	if c.Prefix == "" && len(mid) > 0 && mid[0] <= QualifierEscape {
		if mid[0] != QualifierEscape || len(mid) < 2 || mid[1] > QualifierEscape {
			return nil, false // the writer's own cell, or not an escape
		}
		mid = mid[1:]
	}
	v, rest, err := rowkey.DecodeValue(t, mid)
	if err != nil || len(rest) != 0 {
		return nil, false
	}
	return v, true
}

func (c *Column) keyType(p *Plan, entity string) (rowkey.Type, error) {
	ent := p.Entity(entity)
	if ent == nil {
		return rowkey.Invalid, fmt.Errorf("schema: unknown entity %q", entity)
	}
	ch := ent.Child(c.Child)
	if ch == nil {
		return rowkey.Invalid, fmt.Errorf("schema: entity %q has no child list %q", entity, c.Child)
	}
	return ch.Field(ch.Key).Type, nil
}

// CounterRow is the row key of one bucket of a counter: the table key,
// then, when the counter has more than one bucket, one byte holding the
// bucket number. A read sums every row under the key's prefix.
func (t *Table) CounterRow(vals rowkey.Values, bucket int) ([]byte, error) {
	if t.Counter == nil {
		return nil, fmt.Errorf("schema: %s is not a counter table", t.Name)
	}
	key, err := t.Key.Encode(vals)
	if err != nil {
		return nil, fmt.Errorf("schema: counter row of %s: %w", t.Name, err)
	}
	if t.Counter.Buckets <= 1 {
		return key, nil
	}
	if bucket < 0 || bucket >= t.Counter.Buckets {
		return nil, fmt.Errorf("schema: counter %s has buckets 0..%d, not %d", t.Name, t.Counter.Buckets-1, bucket)
	}
	return append(key, byte(bucket)), nil
}

// CounterBucket picks the bucket an entity contributes to from its encoded
// entity key (layout.EntityKey), stably (FNV-1a 32, as salt). The entity
// key rather than the event id: every version of an entity then lands on
// the same row, where its exact-mode contribution is replaced and where the
// reconcile job can recompute it.
func (t *Table) CounterBucket(entityKey []byte) int {
	if t.Counter == nil || t.Counter.Buckets <= 1 {
		return 0
	}
	return int(rowkey.SaltBucket(entityKey, t.Counter.Buckets))
}
