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

	fam       []byte   // current family, escaped
	fi        *famInfo // nil for a family the table does not know
	famDel    int64    // newest DeleteFamily timestamp seen in this family
	famVDel   []int64  // DeleteFamilyVersion timestamps seen in this family
	qual      []byte   // current qualifier, escaped
	colDel    int64    // newest DeleteColumn timestamp of this column
	verDel    []int64  // Delete (one version) timestamps of this column
	kept      int      // puts of this column judged visible or out of range so far
	famBuf    []byte
	newFamily bool
}

func (v *visibility) startRow() {
	v.fam = v.fam[:0]
	v.fi = nil
	v.famBuf = v.famBuf[:0]
	v.resetFamily()
	v.newFamily = true
}

func (v *visibility) resetFamily() {
	v.famDel = math.MinInt64
	v.famVDel = v.famVDel[:0]
	v.resetColumn()
}

func (v *visibility) resetColumn() {
	v.qual = v.qual[:0]
	v.colDel = math.MinInt64
	v.verDel = v.verDel[:0]
	v.kept = 0
}

// position moves the walk to the key's column and reports whether the family
// or the column changed.
func (v *visibility) position(rk *rawKey) (newFam, newCol bool) {
	if v.newFamily || !bytes.Equal(rk.family, v.fam) {
		v.newFamily = false
		v.fam = append(v.fam[:0], rk.family...)
		name := rk.family
		if rk.famEsc {
			v.famBuf = appendUnescaped(v.famBuf[:0], rk.family)
			name = v.famBuf
		}
		v.fi = v.t.fams[string(name)]
		v.resetFamily()
		v.qual = append(v.qual[:0], rk.qualifier...)
		return true, true
	}
	if !bytes.Equal(rk.qualifier, v.qual) {
		v.resetColumn()
		v.qual = append(v.qual[:0], rk.qualifier...)
		return false, true
	}
	return false, false
}

// judge records a marker or decides a put. position must have been called
// for the key first.
func (v *visibility) judge(rk *rawKey) verdict {
	ts := rk.ts
	switch rk.typ {
	case typePut:
	case typeDeleteFamily:
		if ts > v.famDel {
			v.famDel = ts
		}
		return vMarker
	case typeDeleteFamilyVersion:
		v.famVDel = append(v.famVDel, ts)
		return vMarker
	case typeDeleteColumn:
		if ts > v.colDel {
			v.colDel = ts
		}
		return vMarker
	case typeDelete:
		v.verDel = append(v.verDel, ts)
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
