package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/denorm/denorm/store"
)

// model is a reference of HBase's read semantics for one table, kept as
// plainly as possible so that it can be trusted: every put and every delete
// marker is remembered, and a read works out what is visible from scratch.
//
// What it encodes, per HBase 2.x with default settings (no
// KEEP_DELETED_CELLS, no NEW_VERSION_BEHAVIOR):
//   - a delete marker masks puts of its coordinates at or below its
//     timestamp (DeleteVersion: exactly at it) whenever they were written;
//   - a put at the coordinates and timestamp of an earlier put replaces it;
//   - a read filters by time range and TTL first, skips masked puts, and then
//     returns the newest min(requested, family maximum) versions;
//   - a major compaction keeps, per column, the newest family-maximum
//     unmasked, unexpired puts, and forgets every marker.
type model struct {
	families map[string]store.FamilySpec
	names    []string // family names, sorted
	rows     map[string]*modelRow
}

type modelRow struct {
	puts  map[modelCoord]modelPut
	marks []modelMark
}

type modelCoord struct {
	family    string
	qualifier string
	ts        int64
}

type modelPut struct {
	modelCoord
	value string
}

type modelMark struct {
	kind      store.Kind // DeleteVersion, DeleteColumn or DeleteFamily
	family    string
	qualifier string
	ts        int64
}

func newModel(spec store.TableSpec) *model {
	m := &model{families: map[string]store.FamilySpec{}, rows: map[string]*modelRow{}}
	for _, f := range spec.Families {
		m.families[f.Name] = f
		m.names = append(m.names, f.Name)
	}
	sort.Strings(m.names)
	return m
}

// apply records a row mutation; it refuses, whole, a mutation naming an
// unknown family, as HBase does. LatestTimestamp must already be resolved.
func (m *model) apply(rm store.RowMutation) error {
	for _, x := range rm.Mutations {
		if x.Kind == store.DeleteRow {
			continue
		}
		if _, ok := m.families[x.Family]; !ok {
			return fmt.Errorf("model: row %s: %w: %q", store.Printable(rm.Row), store.ErrFamilyNotFound, x.Family)
		}
		if x.Kind < store.Put || x.Kind > store.DeleteRow {
			return fmt.Errorf("model: unknown mutation kind %v", x.Kind)
		}
	}
	r := m.rows[string(rm.Row)]
	if r == nil {
		r = &modelRow{puts: map[modelCoord]modelPut{}}
		m.rows[string(rm.Row)] = r
	}
	for _, x := range rm.Mutations {
		switch x.Kind {
		case store.Put:
			c := modelCoord{x.Family, string(x.Qualifier), x.Timestamp}
			r.puts[c] = modelPut{c, string(x.Value)}
		case store.DeleteVersion, store.DeleteColumn:
			r.marks = append(r.marks, modelMark{x.Kind, x.Family, string(x.Qualifier), x.Timestamp})
		case store.DeleteFamily:
			r.marks = append(r.marks, modelMark{store.DeleteFamily, x.Family, "", x.Timestamp})
		case store.DeleteRow:
			// HBase turns a row delete into a family delete per family.
			for _, f := range m.names {
				r.marks = append(r.marks, modelMark{store.DeleteFamily, f, "", x.Timestamp})
			}
		}
	}
	return nil
}

func (r *modelRow) masked(p modelCoord) bool {
	for _, mk := range r.marks {
		if mk.family != p.family {
			continue
		}
		switch mk.kind {
		case store.DeleteVersion:
			if mk.qualifier == p.qualifier && p.ts == mk.ts {
				return true
			}
		case store.DeleteColumn:
			if mk.qualifier == p.qualifier && p.ts <= mk.ts {
				return true
			}
		case store.DeleteFamily:
			if p.ts <= mk.ts {
				return true
			}
		}
	}
	return false
}

// expired applies the family TTL against the cell timestamp, in ms.
func (m *model) expired(family string, ts, nowMs int64) bool {
	ttl := m.families[family].TTL
	return ttl > 0 && ts < nowMs-ttl.Milliseconds()
}

// columns groups a row's live puts by column, newest first, columns in
// family then qualifier order.
func (m *model) columns(r *modelRow, keep func(modelPut) bool) [][]modelPut {
	byCol := map[[2]string][]modelPut{}
	for _, p := range r.puts {
		if r.masked(p.modelCoord) || !keep(p) {
			continue
		}
		k := [2]string{p.family, p.qualifier}
		byCol[k] = append(byCol[k], p)
	}
	keys := make([][2]string, 0, len(byCol))
	for k := range byCol {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if a[0] != b[0] {
			return strings.Compare(a[0], b[0])
		}
		return bytes.Compare([]byte(a[1]), []byte(b[1]))
	})
	out := make([][]modelPut, 0, len(keys))
	for _, k := range keys {
		ps := byCol[k]
		slices.SortFunc(ps, func(a, b modelPut) int {
			switch {
			case a.ts > b.ts:
				return -1
			case a.ts < b.ts:
				return 1
			}
			return 0
		})
		out = append(out, ps)
	}
	return out
}

// selected reports whether a read's column list picks a cell.
func selected(cols []store.Column, family, qualifier string) bool {
	if len(cols) == 0 {
		return true
	}
	for _, c := range cols {
		if c.Family == family && (c.Qualifier == nil || string(c.Qualifier) == qualifier) {
			return true
		}
	}
	return false
}

// read returns what a Get with these settings sees, at wall time nowMs.
func (m *model) read(row []byte, cols []store.Column, maxVersions int, tr store.TimeRange, nowMs int64) []store.Cell {
	r := m.rows[string(row)]
	if r == nil {
		return nil
	}
	if maxVersions <= 0 {
		maxVersions = 1
	}
	var out []store.Cell
	keep := func(p modelPut) bool {
		return selected(cols, p.family, p.qualifier) && tr.Contains(p.ts) && !m.expired(p.family, p.ts, nowMs)
	}
	for _, ps := range m.columns(r, keep) {
		n := min(maxVersions, m.families[ps[0].family].Versions())
		for _, p := range ps[:min(n, len(ps))] {
			out = append(out, store.Cell{Row: bytes.Clone(row), Family: p.family, Qualifier: []byte(p.qualifier),
				Timestamp: p.ts, Value: []byte(p.value)})
		}
	}
	return out
}

// readFlushed is read as HBase answers it once the row has been flushed:
// a flush already dropped the versions beyond the family maximum, so a time
// range can no longer reach them. Before a flush HBase filters by time range
// first and may return such a version; which of the two a read sees depends
// on flush timing, so the randomized test accepts either.
func (m *model) readFlushed(row []byte, cols []store.Column, maxVersions int, tr store.TimeRange, nowMs int64) []store.Cell {
	r := m.rows[string(row)]
	if r == nil {
		return nil
	}
	if maxVersions <= 0 {
		maxVersions = 1
	}
	var out []store.Cell
	keep := func(p modelPut) bool {
		return selected(cols, p.family, p.qualifier) && !m.expired(p.family, p.ts, nowMs)
	}
	for _, ps := range m.columns(r, keep) {
		kept := m.families[ps[0].family].Versions()
		n := 0
		for _, p := range ps[:min(kept, len(ps))] {
			if !tr.Contains(p.ts) || n == maxVersions {
				continue
			}
			n++
			out = append(out, store.Cell{Row: bytes.Clone(row), Family: p.family, Qualifier: []byte(p.qualifier),
				Timestamp: p.ts, Value: []byte(p.value)})
		}
	}
	return out
}

// rowKeys lists the rows the model has ever seen, in unsigned byte order.
func (m *model) rowKeys() [][]byte {
	keys := make([][]byte, 0, len(m.rows))
	for k := range m.rows {
		keys = append(keys, []byte(k))
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

// majorCompact keeps what HBase's major compaction keeps.
func (m *model) majorCompact(nowMs int64) {
	for k, r := range m.rows {
		kept := map[modelCoord]modelPut{}
		live := func(p modelPut) bool { return !m.expired(p.family, p.ts, nowMs) }
		for _, ps := range m.columns(r, live) {
			n := m.families[ps[0].family].Versions()
			for _, p := range ps[:min(n, len(ps))] {
				kept[p.modelCoord] = p
			}
		}
		if len(kept) == 0 {
			delete(m.rows, k)
			continue
		}
		m.rows[k] = &modelRow{puts: kept}
	}
}

// clone copies the model deeply enough for a trial apply.
func (m *model) clone() *model {
	c := &model{families: m.families, names: m.names, rows: map[string]*modelRow{}}
	for k, r := range m.rows {
		nr := &modelRow{puts: make(map[modelCoord]modelPut, len(r.puts)), marks: slices.Clone(r.marks)}
		for pk, p := range r.puts {
			nr.puts[pk] = p
		}
		c.rows[k] = nr
	}
	return c
}

// ambiguous reports whether applying rm would make HBase's answer depend on
// when it flushed: a delete that unmasks a version which had fallen beyond
// the family maximum. Before a flush HBase shows such a version again; after
// one (or an in-memory compaction) it is gone. The model shows it, so the
// randomized test never generates such a mutation.
func (m *model) ambiguous(rm store.RowMutation) bool {
	top := func(mm *model) map[modelCoord]bool {
		out := map[modelCoord]bool{}
		r := mm.rows[string(rm.Row)]
		if r == nil {
			return out
		}
		for _, ps := range mm.columns(r, func(modelPut) bool { return true }) {
			n := mm.families[ps[0].family].Versions()
			for _, p := range ps[:min(n, len(ps))] {
				out[p.modelCoord] = true
			}
		}
		return out
	}
	before := top(m)
	trial := m.clone()
	if err := trial.apply(rm); err != nil {
		return false
	}
	written := map[modelCoord]bool{}
	for _, x := range rm.Mutations {
		if x.Kind == store.Put {
			written[modelCoord{x.Family, string(x.Qualifier), x.Timestamp}] = true
		}
	}
	for c := range top(trial) {
		if !before[c] && !written[c] {
			return true
		}
	}
	return false
}
