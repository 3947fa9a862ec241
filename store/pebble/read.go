package pebble

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// query is what a Get or Scan asks of each row.
type query struct {
	table       string
	sel         map[string]*famSel // nil: every family
	maxVersions int                // the request's; each family caps it further
	tr          store.TimeRange
	maxRow      int
}

// famSel is the selection within one family: all of it, or some qualifiers.
type famSel struct {
	all   bool
	quals map[string]struct{}
	// sorted holds the qualifiers of quals in byte order, for seeking to the
	// next one.
	sorted [][]byte
}

func newQuery(t *table, cols []store.Column, maxVersions int, tr store.TimeRange, maxRow int) (*query, error) {
	q := &query{table: t.spec.Name, maxVersions: maxVersions, tr: tr, maxRow: maxRow}
	if q.maxVersions <= 0 {
		q.maxVersions = 1
	}
	if len(cols) > 0 {
		q.sel = map[string]*famSel{}
		for _, c := range cols {
			if _, ok := t.fams[c.Family]; !ok {
				return nil, fmt.Errorf("table %q family %q: %w", t.spec.Name, c.Family, store.ErrFamilyNotFound)
			}
			fs := q.sel[c.Family]
			if fs == nil {
				fs = &famSel{quals: map[string]struct{}{}}
				q.sel[c.Family] = fs
			}
			if c.Qualifier == nil {
				fs.all = true
			} else if _, dup := fs.quals[string(c.Qualifier)]; !dup {
				fs.quals[string(c.Qualifier)] = struct{}{}
				fs.sorted = append(fs.sorted, c.Qualifier)
			}
		}
		for _, fs := range q.sel {
			sort.Slice(fs.sorted, func(i, j int) bool { return bytes.Compare(fs.sorted[i], fs.sorted[j]) < 0 })
		}
	}
	return q, nil
}

// rowReader turns one row's stored keys into its visible cells. It is reused
// from row to row; the cells it returns are not (callers may keep them).
type rowReader struct {
	q   *query
	vis visibility
	cur cursor

	qualBuf []byte
	// seekTo, when set, is where read moves next instead of the next key.
	seekTo  []byte
	seekBuf []byte

	// Sizes of the previous row, to allocate the next one in one go.
	arenaHint int
	cellsHint int

	// With reuse, every row is built in the same arena and cell slice:
	// a scanner's row is only valid until the next call to Next, and not
	// allocating per row halves the cost of a scan (mostly GC).
	reuse bool
	arena []byte
	cells []store.Cell

	// With slab, rows are handed out as without reuse (callers keep them),
	// but built one after another in shared arrays: each row starts where
	// the last one ended, arena and cells hold what is left of the current
	// arrays, and a new pair is made only when a row does not fit. A
	// multi-get of a hundred rows makes a few arrays, not two or three per
	// row. Invariant: every slice handed out is capped at its own length,
	// so a caller appending to a row's cells or bytes cannot write into the
	// next row's.
	slab bool
	// left is how many rows a slab reader still has to read, this one
	// included: new arrays are made for that many rows like the last one,
	// so that a multi-get of two rows does not make arrays for a hundred.
	left int
}

// Bounds on the arrays a slab reader makes when what is left of the last
// ones cannot take a row like the last: room for the rows still to read,
// up to these sizes (or one row, when a row is bigger).
const (
	slabBytes = 16 << 10
	slabCells = 256
)

// slabCap is the capacity of a new slab array: per units a row for rows
// rows, at most limit units unless one row needs more.
func slabCap(per, rows, limit int) int {
	if rows > limit/per {
		return max(limit, per)
	}
	return per * max(rows, 1)
}

func newRowReader(t *table, q *query, now int64) *rowReader {
	return &rowReader{q: q, vis: visibility{t: t, now: now}}
}

// seekAfter is how many keys of unselected columns (or families) a read
// steps over one by one before it seeks past the rest: a seek costs about
// ten steps, so narrow rows keep stepping and wide ones (a counter row with
// a contribution per entity, read for one column) stop being read whole.
const seekAfter = 8

// seek moves the iterator to the seek target and clears it. read steps to
// the next key itself when there is no target: a call per key costs more
// than the test.
func (r *rowReader) seek(it *pdb.Iterator) bool {
	target := r.seekTo
	r.seekTo = nil
	return it.SeekGE(target)
}

// seekPastFamily sets the seek target past every key of the current
// family: its escaped name followed by 0x00 0x02 sorts after the family's
// terminator 0x00 0x01 and whatever follows it, and before any longer
// family name that starts the same way (whose next byte is 0x00 0xFF or
// non-zero).
func (r *rowReader) seekPastFamily() {
	part := r.cur.familyPart()
	k := append(r.seekBuf[:0], part[:len(part)-1]...)
	r.seekBuf = append(k, escEnd+1)
	r.seekTo = r.seekBuf
}

// seekPastColumn sets the seek target past every key of the current
// column: its escaped qualifier followed by 0x00 0x02 sorts after the
// qualifier's terminator 0x00 0x01 (and so after all its versions) and
// before any longer qualifier that starts the same way.
func (r *rowReader) seekPastColumn() {
	col := r.cur.col // the row prefix, family and qualifier, terminated
	k := append(r.seekBuf[:0], col[:len(col)-1]...)
	r.seekBuf = append(k, escEnd+1)
	r.seekTo = r.seekBuf
}

// seekNextColumn sets the seek target to the first key of the next selected
// qualifier of the current family after the current one, or past the family
// when none is left. The target is always beyond the current key.
func (r *rowReader) seekNextColumn(fs *famSel) {
	q := r.cur.qualifier()
	if r.cur.qualEsc {
		r.qualBuf = appendUnescaped(r.qualBuf[:0], q)
		q = r.qualBuf
	}
	i := sort.Search(len(fs.sorted), func(i int) bool { return bytes.Compare(fs.sorted[i], q) > 0 })
	if i == len(fs.sorted) {
		r.seekPastFamily()
		return
	}
	k := append(r.seekBuf[:0], r.cur.familyPart()...)
	r.seekBuf = appendEscaped(k, fs.sorted[i])
	r.seekTo = r.seekBuf
}

// read consumes the row at the iterator's position, moving forward, and
// leaves the iterator at the first key past the row (or exhausted). The
// returned row may have no cells.
func (r *rowReader) read(it *pdb.Iterator) (store.Row, error) {
	var row store.Row
	err := r.readInto(it, &row)
	return row, err
}

// readInto is read that sets *out to the row (left alone on an error).
func (r *rowReader) readInto(it *pdb.Iterator, out *store.Row) error {
	c := &r.cur
	key := it.Key()
	if err := c.first(key); err != nil {
		return err
	}
	var arena []byte
	var row store.Row
	switch {
	case r.reuse:
		arena, row.Cells = r.arena[:0], r.cells[:0]
	case r.slab:
		// What is left of the shared arrays, or new ones when it would not
		// hold a row the size of the last: a row that outgrows them anyway
		// moves to a bigger array as append moves it, leaving the rows
		// before it where they are.
		arena, row.Cells = r.arena, r.cells
		if per := max(r.arenaHint, 256); cap(arena) < per {
			arena = make([]byte, 0, slabCap(per, r.left, slabBytes))
		}
		if per := max(r.cellsHint, 8); cap(row.Cells) < per {
			row.Cells = make([]store.Cell, 0, slabCap(per, r.left, slabCells))
		}
	default:
		arena = make([]byte, 0, max(r.arenaHint, 64))
		if r.cellsHint > 0 {
			row.Cells = make([]store.Cell, 0, r.cellsHint)
		}
	}
	if c.rowEsc {
		arena = appendUnescaped(arena, c.row())
	} else {
		arena = append(arena, c.row()...)
	}
	row.Key = arena[:len(arena):len(arena)]
	r.vis.startRow()

	var (
		raw      int
		fs       *famSel
		fam      string // the family's name, for its cells
		famOn    bool   // the family is selected
		colOn    bool   // the column is selected
		versions int    // cap for this family
		returned int    // versions returned of this column
	)
	skipped := 0 // keys passed over in a row since the last seek or taken column
	hidden := 0  // versions of the current column passed over past its cap
	mv := moveFamily
	ok := true
	// run starts the run below at the current key, which entering says
	// is its family's first; a read of every family tries it at once.
	run := r.q.sel == nil
	entering := run
keys:
	for {
		if run {
			// A run of new columns of a family, each a put with a plain
			// qualifier, in a family with no marker and no TTL: each is
			// the first version of its column, and visible. The run takes
			// them with the fewest tests; the first key that is anything
			// else goes on to the loop below, with the cursor and the
			// column's state as that loop would have left them. In a read
			// of every family the run also takes the first key of each
			// family (entering), when it is a put of a plain qualifier in
			// the time range and the family is known, without a TTL, and
			// keeps a version: that put is visible.
			run = false
			// What the run reads at every key, out of the structs.
			rowKey, maxRow, tr := row.Key, r.q.maxRow, r.q.tr
		families:
			for {
				if entering {
					entering = false
					if c.qualEsc || c.typ != typePut || !tr.Contains(c.ts) {
						break families
					}
					r.vis.enterFamily(c.family(), c.famEsc)
					// Just entered, the family has met no marker: quick
					// is its versions when it is known and has no TTL.
					if r.vis.quick == 0 {
						mv = moveEntered
						break families
					}
					r.vis.judge(c.ts, typePut) // visible: quick > 0
					// value(it) and the size check, written out as in the
					// run below: value does not inline (cost 92 against
					// the budget of 80), and a call per key costs more.
					lv := it.LazyValue()
					val := lv.ValueOrHandle
					if lv.Fetcher != nil {
						v, err := it.ValueAndErr()
						if err != nil {
							return fmt.Errorf("read value of %x: %w", key, err)
						}
						val = v
					}
					raw += len(key) + len(val)
					if raw > maxRow {
						return &store.RowTooBigError{Table: r.q.table, Row: row.Key, Limit: r.q.maxRow}
					}
					fi := r.vis.fi
					fs, famOn, colOn, fam = nil, true, true, fi.name
					versions = min(r.q.maxVersions, fi.versions)
					skipped, returned, hidden = 0, 1, 0
					start := len(arena)
					arena = append(arena, c.qualifier()...)
					qual := arena[start:len(arena):len(arena)]
					start = len(arena)
					arena = append(arena, val...)
					cell := nextCell(&row)
					cell.Row = rowKey
					cell.Family = fam
					cell.Qualifier = qual
					cell.Timestamp = c.ts
					cell.Value = arena[start:len(arena):len(arena)]
				}
				// One family: what the run compares keys with is set
				// here, not changed inside the loop below. The key is
				// still the last cell's (the first of the run), whose
				// plain qualifier the cursor holds: up to eight bytes of
				// it are taken as a word, for the next keys' words to be
				// compared with.
				fe := c.famEnd
				famPart, words := c.col[:fe:fe], wordPart(fe)
				first := len(row.Cells)
				qn := len(c.col) - 2 - fe
				var qw uint64
				if qn <= 8 {
					qw, _ = qualWord(key, fe, qn)
				}
				for {
					if !it.Next() {
						ok = false
						break keys
					}
					key = it.Key()
					var inFam bool
					if words {
						inFam = startsWith(key, famPart)
					} else {
						inFam = len(key) >= fe && string(key[:fe]) == string(famPart)
					}
					if !inFam {
						// Another family or row: the cursor's column no
						// longer matters, as a new family starts afresh.
						if !hasPart(key, c.col[:c.rowLen]) {
							mv = moveOut
							break keys
						}
						c.col = c.col[:c.rowLen]
						if err := c.enterFamily(key); err != nil {
							return err
						}
						mv = moveFamily
						if r.q.sel != nil {
							break families
						}
						entering = true
						continue families
					}
					q := len(key) - tailLen - 2
					n := q - fe
					if n < 0 || key[len(key)-1] != 0xFF-typePut || binary.BigEndian.Uint16(key[q:]) != uint16(escByte)<<8|uint16(escEnd) {
						break
					}
					// A qualifier of up to eight bytes is one word, read
					// once: tested for zero bytes (an escaped qualifier),
					// compared with the last cell's (the same qualifier is
					// another version of its column) and copied.
					var w uint64
					if n <= 8 {
						var plainWord bool
						if w, plainWord = qualWord(key, fe, n); !plainWord || n == qn && w == qw {
							break
						}
					} else if !plain(key[fe:q]) || n == qn && string(key[fe:q]) == string(row.Cells[len(row.Cells)-1].Qualifier) {
						break
					}
					kts := decodeTimestamp(binary.BigEndian.Uint64(key[q+2:]))
					if !tr.Contains(kts) {
						break
					}
					// value(it), written out: the call costs more than the
					// test.
					lv := it.LazyValue()
					val := lv.ValueOrHandle
					if lv.Fetcher != nil {
						v, err := it.ValueAndErr()
						if err != nil {
							return fmt.Errorf("read value of %x: %w", key, err)
						}
						val = v
					}
					raw += len(key) + len(val)
					if raw > maxRow {
						return &store.RowTooBigError{Table: r.q.table, Row: row.Key, Limit: r.q.maxRow}
					}
					start := len(arena)
					var qual []byte
					if n <= 8 && cap(arena)-start >= 8 {
						// A short qualifier is copied as its word; the
						// value then overwrites what follows it.
						b := arena[start : start+8]
						binary.LittleEndian.PutUint64(b, w)
						qual = b[:n:n]
						arena = arena[:start+n]
					} else {
						arena = append(arena, key[fe:q]...)
						qual = arena[start:len(arena):len(arena)]
					}
					qn, qw = n, w
					start = len(arena)
					arena = append(arena, val...)
					cell := nextCell(&row)
					cell.Row = rowKey
					cell.Family = fam
					cell.Qualifier = qual
					cell.Timestamp = kts
					cell.Value = arena[start:len(arena):len(arena)]
				}
				if len(row.Cells) > first {
					// Leave the cursor and the column's state as the loop
					// below would have after the run's last put.
					last := &row.Cells[len(row.Cells)-1]
					c.col = append(append(c.col[:fe], last.Qualifier...), escByte, escEnd)
					c.ts, c.typ = last.Timestamp, typePut
					r.vis.enterColumn()
					r.vis.judge(last.Timestamp, typePut)
					returned, hidden = 1, 0
				}
				var err error
				if mv, err = c.next(key); err != nil {
					return err
				}
				if mv == moveOut {
					break keys
				}
				break
			}
		}
		val, err := value(it)
		if err != nil {
			return fmt.Errorf("read value of %x: %w", key, err)
		}
		raw += len(key) + len(val)
		if raw > r.q.maxRow {
			return &store.RowTooBigError{Table: r.q.table, Row: row.Key, Limit: r.q.maxRow}
		}
		if mv != moveVersion {
			if mv >= moveFamily {
				if mv == moveFamily {
					r.vis.enterFamily(c.family(), c.famEsc)
				}
				fi := r.vis.fi
				famOn = fi != nil
				fs = nil
				if famOn && r.q.sel != nil {
					fs = r.q.sel[fi.name]
					famOn = fs != nil
				}
				if famOn {
					versions = min(r.q.maxVersions, fi.versions)
					fam = fi.name
				}
				skipped = 0
			} else {
				r.vis.enterColumn()
			}
			returned, hidden = 0, 0
			colOn = famOn
			if famOn && fs != nil && !fs.all {
				q := c.qualifier()
				if c.qualEsc {
					r.qualBuf = appendUnescaped(r.qualBuf[:0], q)
					q = r.qualBuf
				}
				_, colOn = fs.quals[string(q)]
				if colOn {
					skipped = 0
				}
			}
		}
		switch {
		case !famOn:
			if skipped++; skipped >= seekAfter {
				r.seekPastFamily()
				skipped = 0
			}
		// Family markers carry the empty qualifier: never seek away from
		// it, or the markers after the first would go unseen.
		case !colOn && len(c.qualifier()) > 0:
			if skipped++; skipped >= seekAfter {
				r.seekNextColumn(fs)
				skipped = 0
			}
		// Once a column has given every version the read may return, the
		// rest of it (older versions, and the markers among them, which
		// mask nothing outside the column) cannot show: past a few keys
		// the read seeks to the next column, as HBase's read path does, so
		// that a column rewritten at every version (a live copy refreshed
		// by each rename of its reference) costs the same to read however
		// old it is. The empty qualifier is never left early: family
		// markers there mask the columns that follow.
		case colOn && returned >= versions && len(c.qualifier()) > 0:
			if hidden++; hidden >= seekAfter {
				r.seekPastColumn()
				hidden = 0
			}
		case r.vis.judge(c.ts, c.typ) != vVisible || !colOn || returned >= versions || !r.q.tr.Contains(c.ts):
		default:
			returned++
			start := len(arena)
			if c.qualEsc {
				arena = appendUnescaped(arena, c.qualifier())
			} else {
				arena = append(arena, c.qualifier()...)
			}
			qual := arena[start:len(arena):len(arena)]
			start = len(arena)
			arena = append(arena, val...)
			cell := nextCell(&row)
			cell.Row = row.Key
			cell.Family = fam
			cell.Qualifier = qual
			cell.Timestamp = c.ts
			cell.Value = arena[start:len(arena):len(arena)]
			if (fs == nil || fs.all) && !c.qualEsc && r.vis.plainFamily() {
				// The run below takes the keys after this put.
				run = true
				continue keys
			}
		}
		// Move to the seek target when one was set, else to the next key.
		if r.seekTo != nil {
			ok = r.seek(it)
		} else {
			ok = it.Next()
		}
		if !ok {
			break
		}
		key = it.Key()
		if mv, err = c.next(key); err != nil {
			return err
		}
		if mv == moveOut {
			break
		}
	}
	// The iterator is still valid when the loop stopped at the next row: only
	// an exhausted one can hold an error.
	if !ok {
		if err := it.Error(); err != nil {
			return err
		}
	}
	r.arenaHint, r.cellsHint = len(arena), len(row.Cells)
	switch {
	case r.reuse:
		// Keep the bigger of the buffers: an arena that grew mid-row left
		// the earlier cells in its old array, which stays alive through them.
		r.arena, r.cells = arena, row.Cells
	case r.slab:
		// The next row starts past this one's end; this one's cells end
		// at its last (the invariant above). Its bytes are capped already.
		n := len(row.Cells)
		r.arena, r.cells = arena[len(arena):], row.Cells[n:]
		row.Cells = row.Cells[:n:n]
		if n == 0 {
			row.Cells = nil
		}
	}
	*out = row
	return nil
}

// value returns the value at the iterator's position. A value stored in
// place (every value the store writes, short of Pebble separating large
// ones out) is the lazy value's bytes themselves: taking them saves a call
// per key; any other is fetched as ValueAndErr does.
func value(it *pdb.Iterator) ([]byte, error) {
	if lv := it.LazyValue(); lv.Fetcher == nil {
		return lv.ValueOrHandle, nil
	}
	return it.ValueAndErr()
}

// maxRowSize is the row limit of reads of t: the table's own, else the
// store's.
func maxRowSize(t *table, limit int) int {
	if t.spec.MaxRowSize > 0 && t.spec.MaxRowSize < math.MaxInt32 {
		return int(t.spec.MaxRowSize)
	}
	return limit
}

// nextCell adds a cell to the row and returns it, for the caller to write
// in place: append of a composite literal builds the cell on the stack
// first and copies it.
func nextCell(row *store.Row) *store.Cell {
	n := len(row.Cells)
	if n == cap(row.Cells) {
		row.Cells = append(row.Cells, store.Cell{})
	} else {
		row.Cells = row.Cells[:n+1]
	}
	return &row.Cells[n]
}
