package review

import (
	"fmt"
	"strings"

	"github.com/denorm/denorm/cost"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Limits the data-shape rules measure against.
const (
	// Beyond this many elements an embedded list is a warning, and beyond
	// unboundedChildren an error, whatever the element size.
	manyChildren      = 10_000
	unboundedChildren = 100_000
	// Row sizes for the same two levels. HBase refuses to return rows over
	// 1 GiB; long before that a row hurts heap, caching and compaction.
	bigRow  = 10 << 20
	hugeRow = 100 << 20
	// A cell this large is worth a warning (MOB territory starts at about
	// 100 KiB; by 1 MiB a value is rewritten expensively by compactions).
	bigCell = 1 << 20
	// Names longer than this are flagged.
	longFamily    = 2
	longQualifier = 4
)

// familySettings is what justifies a separate family: settings that differ.
func familySettings(f *schema.Family) string {
	return fmt.Sprintf("v=%d ttl=%s c=%s e=%s b=%d bf=%s m=%t minv=%d kdc=%s mob=%t/%d nbc=%t eng=%s",
		f.Versions(), f.TTL, strings.ToUpper(f.Compression), strings.ToUpper(f.DataBlockEncoding),
		f.BlockSize, strings.ToUpper(f.BloomFilter), f.InMemory,
		f.MinVersions, f.KeepDeletedCells, f.MOB, f.MOBThreshold, f.NoBlockCache, f.Compaction)
}

// checkFamilyCount: beyond two families, each extra one needs settings of
// its own to be worth its store files and memstore.
func checkFamilyCount(r *reviewer) {
	for _, t := range r.plan.Tables {
		if len(t.Families) <= 2 {
			continue
		}
		groups := map[string][]string{}
		for _, f := range t.Families {
			k := familySettings(f)
			groups[k] = append(groups[k], f.Name)
		}
		if len(groups) == len(t.Families) {
			continue // every family has settings of its own
		}
		var same []string
		for _, f := range t.Families {
			if g := groups[familySettings(f)]; len(g) > 1 && g[0] == f.Name {
				same = append(same, strings.Join(g, ", "))
			}
		}
		r.add("family-count", at{table: t.Name, line: firstLine(t.Lines["families"], t.Line)}, fmt.Sprintf(
			"table %s has %d column families, and these share the same settings: %s; every family costs a store, a memstore and files in each region",
			t.Name, len(t.Families), strings.Join(same, "; ")))
	}
}

// checkRowUnbounded: a child list embedded as one cell per element grows
// the row with the list.
func checkRowUnbounded(r *reviewer) {
	for _, t := range r.plan.Tables {
		e := r.plan.Entity(t.Entity)
		if e == nil || t.Role == schema.RoleCounter {
			continue
		}
		key := cost.KeyBytes(r.plan, t)
		for _, c := range t.Columns {
			if !c.Template || c.Child == "" || c.Child == t.Each {
				continue
			}
			ch := e.Child(c.Child)
			if ch == nil {
				continue
			}
			s := cost.ColumnShape(e, c)
			cell := int64(cost.CellBytes(int(key), len(s.Family), int(s.QualBytes), int(s.ValBytes)))
			rowBytes := int64(ch.Max) * cell
			where := at{table: t.Name, line: firstLine(ch.Lines["max"], ch.Line, c.Line)}
			msg := fmt.Sprintf("table %s embeds child list %s as one cell per element in the %s row: up to %d elements of about %d bytes, a row of up to %s",
				t.Name, ch.Name, e.Name, ch.Max, cell, humanBytes(rowBytes))
			switch {
			case t.MaxRowSize > 0 && rowBytes > t.MaxRowSize:
				r.add("row-unbounded", where, msg+fmt.Sprintf(", over the table's max_row_size of %s: reads of such a row fail", humanBytes(t.MaxRowSize)))
			case ch.Max >= unboundedChildren || rowBytes >= hugeRow:
				r.add("row-unbounded", where, msg)
			case ch.Max > manyChildren || rowBytes >= bigRow:
				r.addSev("row-unbounded", SeverityWarning, where, msg)
			}
		}
	}
}

// checkCellHuge compares each column's cell size with the cell limit: the
// typical size (size:) and, where declared, the largest (max_size:). A
// family that stores large values as MOB has taken the fix for big cells
// under the limit.
func checkCellHuge(r *reviewer) {
	for _, t := range r.plan.Tables {
		e := r.plan.Entity(t.Entity)
		if e == nil || t.Role == schema.RoleCounter {
			continue
		}
		key := cost.KeyBytes(r.plan, t)
		for _, c := range t.Columns {
			s := cost.ColumnShape(e, c)
			size := int64(cost.CellBytes(int(key), len(s.Family), int(s.QualBytes), int(s.ValBytes)))
			largest, what := size, "cells of about"
			if m := maxValueBytes(e, c); m > s.ValBytes {
				largest, what = size-s.ValBytes+m, "cells of up to"
			}
			where := at{table: t.Name, line: firstLine(c.Line, t.Line)}
			f := t.Family(c.Family)
			mob := f != nil && f.MOB && largest >= mobThreshold(f)
			switch {
			case largest > store.DefaultMaxCellSize:
				r.addSev("cell-huge", SeverityError, where, fmt.Sprintf(
					"column %s of table %s holds %s %s, over the %s cell limit: HBase refuses them",
					c.Name(), t.Name, what, humanBytes(largest), humanBytes(store.DefaultMaxCellSize)))
			case largest >= bigCell && !mob:
				r.add("cell-huge", where, fmt.Sprintf(
					"column %s of table %s holds %s %s (limit %s) in a family without MOB: every flush and compaction rewrites them",
					c.Name(), t.Name, what, humanBytes(largest), humanBytes(store.DefaultMaxCellSize)))
			}
		}
	}
}

// defaultMOBThreshold is HBase's MOB_THRESHOLD default (100 KiB).
const defaultMOBThreshold = 100 << 10

func mobThreshold(f *schema.Family) int64 {
	if f.MOBThreshold > 0 {
		return f.MOBThreshold
	}
	return defaultMOBThreshold
}

// maxValueBytes is the largest value a column's cell holds, from the
// fields' max_size (0 when none is declared).
func maxValueBytes(e *schema.Entity, c *schema.Column) int64 {
	if c.Field != "" {
		if f := e.Field(c.Field); f != nil {
			return f.MaxSize
		}
		return 0
	}
	ch := e.Child(c.Child)
	if ch == nil {
		return 0
	}
	var sum int64
	declared := false
	for _, f := range ch.Fields {
		if f.MaxSize > 0 {
			sum += f.MaxSize
			declared = true
		} else {
			sum += f.AvgSize()
		}
	}
	if !declared {
		return 0
	}
	return sum
}

// checkVersionsAsHistory: more than one version is only safe as a short
// undo buffer, never as the record of what happened.
func checkVersionsAsHistory(r *reviewer) {
	for _, t := range r.plan.Tables {
		for _, f := range t.Families {
			if f.Versions() <= 1 {
				continue
			}
			msg := fmt.Sprintf("family %s of table %s keeps %d versions: older ones vanish at compaction once %d newer exist",
				f.Name, t.Name, f.Versions(), f.Versions())
			switch {
			case f.TTL > 0 && f.MinVersions > 0:
				msg += fmt.Sprintf(", and all but the newest %d after the %s TTL", f.MinVersions, f.TTL)
			case f.TTL > 0:
				msg += fmt.Sprintf(", and all of them after the %s TTL", f.TTL)
			}
			if f.KeepDeletedCells != "" {
				msg += "; KEEP_DELETED_CELLS keeps deleted ones readable by time-range reads only until the same limits drop them"
			}
			r.add("versions-as-history", at{table: t.Name, line: firstLine(f.Lines["versions"], f.Line)}, msg)
		}
	}
}

// checkNamesLong works out what names cost per record: every cell stores
// its family and qualifier names in full.
func checkNamesLong(r *reviewer) {
	for _, t := range r.plan.Tables {
		l := cost.TableLayout(r.plan, t)
		var long []string
		var names, saved, total float64
		for _, f := range t.Families {
			if len(f.Name) > longFamily {
				long = append(long, "family "+f.Name)
			}
		}
		seen := map[string]bool{}
		for _, c := range l.Cells {
			n := c.PerRow * l.RowsPerRecord
			fixed := c.QualBytes
			names += n * float64(len(c.Family)+int(fixed))
			total += n * float64(cost.CellBytes(int(l.KeyBytes), len(c.Family), int(c.QualBytes), int(c.ValBytes)))
			if len(c.Family) > 1 {
				saved += n * float64(len(c.Family)-1)
			}
			lit := literalQualifier(c.Qualifier)
			if len(lit) > longQualifier {
				saved += n * float64(len(lit)-1)
				if !seen[c.Qualifier] {
					seen[c.Qualifier] = true
					long = append(long, "qualifier "+c.Family+":"+c.Qualifier)
				}
			}
		}
		if len(long) == 0 || total == 0 {
			continue
		}
		r.add("names-long", at{table: t.Name, line: firstLine(t.Lines["columns"], t.Lines["families"], t.Line)}, fmt.Sprintf(
			"table %s: %s; names take %.0f of the %.0f bytes per record (%.0f%%), and one-byte names would save about %.0f bytes per record",
			t.Name, abbreviate(long, 4), names, total, 100*names/total, saved))
	}
}

// literalQualifier is the fixed text of a qualifier, without a {template}.
func literalQualifier(q string) string {
	for {
		i := strings.IndexByte(q, '{')
		if i < 0 {
			return q
		}
		j := strings.IndexByte(q[i:], '}')
		if j < 0 {
			return q
		}
		q = q[:i] + q[i+j+1:]
	}
}

// abbreviate joins the first n items and counts the rest.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
