package pebble

import (
	"bytes"
	"math"
)

// verdict is what HBase's scan rules make of one stored key.
type verdict uint8

const (
	vMarker  verdict = iota // a delete marker: never returned, purged by compaction
	vMasked                 // a put a marker masks
	vExpired                // a put past its family's TTL
	vExtra                  // a put beyond its family's maximum versions
	vVisible                // a put that a read may return
)

// visibility walks one row's keys in stored order (family, qualifier
// ascending, timestamp and type descending) and judges each, the way HBase's
// delete tracker and column tracker do. Stored order guarantees that every
// marker that can mask a put is seen before the put: markers of the same
// coordinates sort first at equal timestamps, family markers live at the
// empty qualifier, which is the family's first column, and sort before every
// empty-qualifier put at or below their timestamp.
type visibility struct {
	t   *table
	now int64

	fam     []byte   // current family, escaped
	fi      *famInfo // nil for a family the table does not know
	famDel  int64    // newest DeleteFamily timestamp seen in this family
	famVDel []int64  // DeleteFamilyVersion timestamps seen in this family
	qual    []byte   // current qualifier, escaped
	colDel  int64    // newest DeleteColumn timestamp of this column
	verDel  []int64  // Delete (one version) timestamps of this column
	kept    int      // puts of this column judged visible or out of range so far
	// quick is how many more puts of this column are visible by their count
	// alone: while the family is known and has no TTL, and no marker of the
	// family or the column was met, every put up to the family's versions.
	quick     int
	quickFrom int // quick when kept last counted the puts it let through
	famBuf    []byte
	newFamily bool
	// recent caches the families met so far by their stored name, so that
	// a scan does not hash a family name at every row. A table has a few
	// families; a key naming more (unknown ones) than recentFams falls back
	// to the table's map.
	recent []recentFam
	next   int // the index in recent after the family last found
}

type recentFam struct {
	stored []byte
	fi     *famInfo
}

const recentFams = 8

// startRow starts the walk of a row. Its first key enters a family
// (position does, or the reader calls enterFamily), which resets the
// family's and the column's state: nothing else is reset here.
func (v *visibility) startRow() {
	v.fam = v.fam[:0]
	v.fi = nil
	v.newFamily = true
}

func (v *visibility) resetFamily() {
	v.famDel = math.MinInt64
	v.famVDel = v.famVDel[:0]
	// resetColumn, knowing that no family marker is left.
	v.qual = v.qual[:0]
	v.colDel = math.MinInt64
	v.verDel = v.verDel[:0]
	v.kept = 0
	v.quick = 0
	if fi := v.fi; fi != nil && fi.ttlMs == 0 {
		v.quick = fi.versions
	}
	v.quickFrom = v.quick
}

func (v *visibility) resetColumn() {
	v.qual = v.qual[:0]
	v.colDel = math.MinInt64
	v.verDel = v.verDel[:0]
	v.kept = 0
	v.quick = 0
	if v.fi != nil && v.fi.ttlMs == 0 && v.famDel == math.MinInt64 && len(v.famVDel) == 0 {
		v.quick = v.fi.versions
	}
	v.quickFrom = v.quick
}

// position moves the walk to the key's column and reports whether the family
// or the column changed. It compares the key with copies of the last family
// and qualifier; a reader that already knows where the key stands calls
// enterFamily and enterColumn instead.
func (v *visibility) position(rk *rawKey) (newFam, newCol bool) {
	if v.newFamily || !bytes.Equal(rk.family, v.fam) {
		v.fam = append(v.fam[:0], rk.family...)
		v.enterFamily(rk.family, rk.famEsc)
		v.qual = append(v.qual[:0], rk.qualifier...)
		return true, true
	}
	if !bytes.Equal(rk.qualifier, v.qual) {
		v.enterColumn()
		v.qual = append(v.qual[:0], rk.qualifier...)
		return false, true
	}
	return false, false
}

// enterFamily starts the walk of a family, given as stored (escaped when
// esc is set): its markers and column state start afresh.
func (v *visibility) enterFamily(family []byte, esc bool) {
	v.newFamily = false
	// Rows of a table mostly hold the same families, met in the same order:
	// the family after the last one found (the first after the last) is
	// tried here, written out because a call costs more than the test, and
	// lookup does the rest.
	if i := v.next; i < len(v.recent) && sameName(v.recent[i].stored, family) {
		v.next = i + 1
		v.fi = v.recent[i].fi
	} else if len(v.recent) > 0 && i == len(v.recent) && sameName(v.recent[0].stored, family) {
		v.next = 1
		v.fi = v.recent[0].fi
	} else {
		v.fi = v.lookup(family, esc)
	}
	v.resetFamily()
}

// lookup finds a family's settings by its stored name, when it is not the
// one enterFamily tried; nil means the table has no such family.
func (v *visibility) lookup(family []byte, esc bool) *famInfo {
	for i, r := range v.recent {
		if string(r.stored) == string(family) {
			v.next = i + 1
			return r.fi
		}
	}
	name := family
	if esc {
		v.famBuf = appendUnescaped(v.famBuf[:0], family)
		name = v.famBuf
	}
	fi := v.t.fams[string(name)]
	if len(v.recent) < recentFams {
		v.recent = append(v.recent, recentFam{stored: append([]byte(nil), family...), fi: fi})
		v.next = len(v.recent)
	}
	return fi
}

// plainFamily reports whether the walk is in a family the table knows, with
// no TTL, in which no family marker was met: there the first put of each
// column is visible.
func (v *visibility) plainFamily() bool {
	return v.fi != nil && v.fi.ttlMs == 0 && v.famDel == math.MinInt64 && len(v.famVDel) == 0
}

// enterColumn starts the walk of the next column of the current family.
func (v *visibility) enterColumn() { v.resetColumn() }

// judge records a marker or decides a put, given the key's timestamp and
// type. position (or enterFamily and enterColumn) must have placed the key
// first. A visible put of a known family without a TTL, in a column and
// family that no marker was met in, takes the short way; judgeAll has every
// rule.
func (v *visibility) judge(ts int64, typ byte) verdict {
	if typ == typePut && v.quick > 0 {
		v.quick--
		return vVisible
	}
	return v.judgeAll(ts, typ)
}

// judgeAll is judge for any key.
func (v *visibility) judgeAll(ts int64, typ byte) verdict {
	// Count the puts judge let through since kept was last brought up to
	// date.
	v.kept += v.quickFrom - v.quick
	v.quickFrom = v.quick
	switch typ {
	case typePut:
	case typeDeleteFamily:
		if ts > v.famDel {
			v.famDel = ts
		}
		v.quick, v.quickFrom = 0, 0
		return vMarker
	case typeDeleteFamilyVersion:
		v.famVDel = append(v.famVDel, ts)
		v.quick, v.quickFrom = 0, 0
		return vMarker
	case typeDeleteColumn:
		if ts > v.colDel {
			v.colDel = ts
		}
		v.quick, v.quickFrom = 0, 0
		return vMarker
	case typeDelete:
		v.verDel = append(v.verDel, ts)
		v.quick, v.quickFrom = 0, 0
		return vMarker
	default:
		// Unknown types are never written; treat them as markers that mask
		// nothing so a read skips them and a compaction purges them.
		return vMarker
	}
	if ts <= v.famDel || ts <= v.colDel || contains(v.famVDel, ts) || contains(v.verDel, ts) {
		return vMasked
	}
	if v.fi == nil {
		return vMasked
	}
	// MIN_VERSIONS: the newest versions of a column outlive the TTL.
	if v.fi.ttlMs > 0 && ts < v.now-v.fi.ttlMs && v.kept >= v.fi.minVersions {
		return vExpired
	}
	v.kept++
	if v.kept > v.fi.versions {
		return vExtra
	}
	return vVisible
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// sameName reports whether two stored family names are equal. Family names
// are mostly a byte or two: those are compared in a loop, without the call
// to memequal that comparing strings makes.
func sameName(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 4 {
		return string(a) == string(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
