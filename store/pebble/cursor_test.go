package pebble

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// walkCursor places keys, in order, with a cursor as a row read does, and
// checks every placement against parseKey: the move it reports, the parts it
// holds and its errors.
func walkCursor(t *testing.T, keys [][]byte) {
	t.Helper()
	var c cursor
	var prev rawKey
	started := false
	for _, key := range keys {
		var rk rawKey
		perr := parseKey(key, &rk)
		if !started {
			err := c.first(key)
			if (err != nil) != (perr != nil) {
				t.Fatalf("first(%x): error %v, parseKey %v", key, err, perr)
			}
			if err != nil {
				continue
			}
			started = true
			checkCursor(t, &c, key, &rk)
			prev = copyRawKey(rk)
			continue
		}
		mv, err := c.next(key)
		if !bytes.HasPrefix(key, prev.rowPrefix) {
			// Another row: the cursor must say so and keep its place.
			if mv != moveOut || err != nil {
				t.Fatalf("next(%x) after row %x: move %d, error %v; want moveOut", key, prev.rowPrefix, mv, err)
			}
			checkCursor(t, &c, nil, &prev)
			err = c.first(key)
			if (err != nil) != (perr != nil) {
				t.Fatalf("first(%x): error %v, parseKey %v", key, err, perr)
			}
			if err != nil {
				started = false
				continue
			}
			checkCursor(t, &c, key, &rk)
			prev = copyRawKey(rk)
			continue
		}
		if (err != nil) != (perr != nil) {
			t.Fatalf("next(%x): error %v, parseKey %v", key, err, perr)
		}
		if err != nil {
			// A read stops at its first error; start afresh.
			started = false
			continue
		}
		want := moveVersion
		switch {
		case !bytes.Equal(rk.family, prev.family):
			want = moveFamily
		case !bytes.Equal(rk.qualifier, prev.qualifier):
			want = moveColumn
		}
		if mv != want {
			t.Fatalf("next(%x) after %+v: move %d, want %d", key, prev, mv, want)
		}
		checkCursor(t, &c, key, &rk)
		prev = copyRawKey(rk)
	}
}

func copyRawKey(rk rawKey) rawKey {
	rk.rowPrefix = bytes.Clone(rk.rowPrefix)
	rk.family = bytes.Clone(rk.family)
	rk.qualifier = bytes.Clone(rk.qualifier)
	return rk
}

// checkCursor compares the cursor's parts with a parsed key; key, when not
// nil, is the key just placed (its timestamp and type are checked too).
func checkCursor(t *testing.T, c *cursor, key []byte, rk *rawKey) {
	t.Helper()
	if !bytes.Equal(c.rowPrefix(), rk.rowPrefix) || !bytes.Equal(c.family(), rk.family) || !bytes.Equal(c.qualifier(), rk.qualifier) ||
		c.famEsc != rk.famEsc || c.qualEsc != rk.qualEsc {
		t.Fatalf("cursor at %x holds row %x family %x (esc %v) qualifier %x (esc %v), parseKey %+v",
			key, c.rowPrefix(), c.family(), c.famEsc, c.qualifier(), c.qualEsc, *rk)
	}
	if rowEsc := bytes.IndexByte(rk.rowPrefix[tablePfx:len(rk.rowPrefix)-2], escByte) >= 0; c.rowEsc != rowEsc {
		t.Fatalf("cursor at %x: row escaped %v, want %v", key, c.rowEsc, rowEsc)
	}
	if key != nil && (c.ts != rk.ts || c.typ != rk.typ) {
		t.Fatalf("cursor at %x: ts %d type %d, parseKey %d %d", key, c.ts, c.typ, rk.ts, rk.typ)
	}
}

// TestCursorMatchesParseKey walks sorted runs of random keys, whose parts
// are short strings of the bytes escaping treats specially, so that rows,
// families and qualifiers that are prefixes of one another, hold zeros or
// end in them all meet.
func TestCursorMatchesParseKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte{0x00, 0x01, 'a', 0xfe, 0xff}
	part := func(n int) []byte {
		b := make([]byte, rng.IntN(n))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	types := []byte{typePut, typeDelete, typeDeleteFamilyVersion, typeDeleteColumn, typeDeleteFamily}
	for run := 0; run < 300; run++ {
		rows := [][]byte{part(3), part(3), part(3)}
		fams := [][]byte{part(3), part(3), part(3)}
		quals := [][]byte{part(4), part(4), part(4), part(4)}
		keys := make([][]byte, 60)
		for i := range keys {
			keys[i] = encodeCellKey(cellCoord{Table: 1, Row: rows[rng.IntN(len(rows))], Family: fams[rng.IntN(len(fams))],
				Qualifier: quals[rng.IntN(len(quals))], Timestamp: int64(rng.IntN(4)) - 1, Type: types[rng.IntN(len(types))]})
		}
		slices.SortFunc(keys, bytes.Compare)
		walkCursor(t, slices.CompactFunc(keys, bytes.Equal))
	}
}

// TestCursorMalformedKeys places keys cut short or with a byte changed,
// among good ones: the cursor must fail exactly where parseKey fails and
// never place a key parseKey refuses.
func TestCursorMalformedKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	good := []cellCoord{
		{Table: 1, Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 5, Type: typePut},
		{Table: 1, Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("q\x00"), Timestamp: 5, Type: typePut},
		{Table: 1, Row: []byte("r\x00"), Family: []byte("f\x00"), Qualifier: []byte{}, Timestamp: 5, Type: typeDeleteFamily},
		{Table: 1, Row: []byte("row"), Family: []byte("fam"), Qualifier: []byte("qual"), Timestamp: 1, Type: typePut},
	}
	for run := 0; run < 2000; run++ {
		a := good[rng.IntN(len(good))]
		base := encodeCellKey(a)
		bad := bytes.Clone(base)
		switch rng.IntN(3) {
		case 0:
			bad = bad[:rng.IntN(len(bad))]
		case 1:
			bad[tablePfx+rng.IntN(len(bad)-tablePfx)] = []byte{0x00, 0x01, 0x02, 0xff, 'x'}[rng.IntN(5)]
		default:
			i := tablePfx + rng.IntN(len(bad)-tablePfx)
			bad = append(bad[:i:i], append([]byte{0x00, 0x01, 0x02, 0xff}[rng.IntN(4):][:1], bad[i:]...)...)
		}
		// The malformed key follows a good key of its row, as a read would
		// meet it; the walk checks the cursor against parseKey.
		walkCursor(t, [][]byte{base, bad})
	}
}

// TestPlainBefore checks the word-at-a-time test against the byte loop for
// every length up to past a word and a zero at every place.
func TestPlainBefore(t *testing.T) {
	for n := 0; n <= 12; n++ {
		for zero := -1; zero < n; zero++ {
			for _, fill := range []byte{0x01, 0x7f, 0x80, 0xff} {
				key := bytes.Repeat([]byte{0x00}, tablePfx) // zeros before the part must not count
				part := bytes.Repeat([]byte{fill}, n)
				if zero >= 0 {
					part[zero] = 0
				}
				key = append(key, part...)
				key = append(key, escByte, escEnd)
				from, q := tablePfx, tablePfx+n
				if got, want := plainBefore(key, from, q), plain(key[from:q]); got != want {
					t.Fatalf("part %x: plainBefore %v, plain %v", part, got, want)
				}
			}
		}
	}
}

// TestStartsWith compares the word-wise prefix test of the scan's short loop
// with bytes.HasPrefix, for every part length it takes, keys shorter and
// longer than the part, and a difference at every byte.
func TestStartsWith(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		if !wordPart(n) {
			continue
		}
		part := make([]byte, n)
		for i := range part {
			part[i] = byte(rng.IntN(3)) // few values: near misses are common
		}
		for kl := n - 2; kl <= n+10; kl++ {
			if kl < 0 {
				continue
			}
			key := make([]byte, kl)
			copy(key, part)
			for i := min(n, kl); i < kl; i++ {
				key[i] = byte(rng.IntN(256))
			}
			check := func(key []byte) {
				if got, want := startsWith(key, part), bytes.HasPrefix(key, part); got != want {
					t.Fatalf("startsWith(%x, %x) = %v, want %v", key, part, got, want)
				}
			}
			check(key)
			for i := 0; i < min(n, kl); i++ {
				k := slices.Clone(key)
				k[i] ^= 1 << rng.IntN(8)
				check(k)
			}
		}
	}
	for n := 0; n <= 64; n++ {
		if got := wordPart(n); got != (n >= 16 && n <= 32) {
			t.Fatalf("wordPart(%d) = %v", n, got)
		}
	}
}

// TestSameName compares the family lookup's name test with bytes.Equal.
func TestSameName(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for la := 0; la <= 7; la++ {
		for lb := 0; lb <= 7; lb++ {
			for range 50 {
				a, b := make([]byte, la), make([]byte, lb)
				for i := range a {
					a[i] = byte(rng.IntN(2))
				}
				for i := range b {
					b[i] = byte(rng.IntN(2))
				}
				if got, want := sameName(a, b), bytes.Equal(a, b); got != want {
					t.Fatalf("sameName(%x, %x) = %v, want %v", a, b, got, want)
				}
			}
		}
	}
}

// TestCursorLongParts is TestCursorMatchesParseKey with longer rows and
// families, mostly of one length, so that the cursor's guess of a row's
// length from the last row, its word tests of rows and its one-word split
// of a family meet rows and families on both sides of a word, with and
// without zeros.
func TestCursorLongParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	part := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(rng.IntN(3))
			if rng.IntN(12) == 0 {
				b[i] = []byte{0x00, 0x01, 0xff}[rng.IntN(3)]
			}
		}
		return b
	}
	types := []byte{typePut, typeDelete, typeDeleteColumn, typeDeleteFamily}
	for run := 0; run < 300; run++ {
		n := rng.IntN(20)
		var rows, fams, quals [][]byte
		for range 4 {
			m := n
			if rng.IntN(4) == 0 {
				m = rng.IntN(20)
			}
			rows = append(rows, part(m))
			fams = append(fams, part(rng.IntN(11)))
			quals = append(quals, part(rng.IntN(11)))
		}
		keys := make([][]byte, 60)
		for i := range keys {
			keys[i] = encodeCellKey(cellCoord{Table: 1, Row: rows[rng.IntN(len(rows))], Family: fams[rng.IntN(len(fams))],
				Qualifier: quals[rng.IntN(len(quals))], Timestamp: int64(rng.IntN(3)), Type: types[rng.IntN(len(types))]})
		}
		slices.SortFunc(keys, bytes.Compare)
		walkCursor(t, slices.CompactFunc(keys, bytes.Equal))
	}
}

// TestWordTests checks qualWord, firstZero and plainWords against byte
// loops, on every length and every position of a zero byte.
func TestWordTests(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for z := -1; z < n; z++ {
			b := make([]byte, n+8)
			for i := range b {
				b[i] = byte(0x80 + i)
			}
			if z >= 0 {
				b[z] = 0
			}
			if got, want := plainWords(b[:n]), plain(b[:n]); got != want {
				t.Fatalf("plainWords(%x) = %v, want %v", b[:n], got, want)
			}
			// firstZero looks at eight bytes, and at none of fewer.
			want := 8
			if i := bytes.IndexByte(b[:8], 0); n >= 8 && i >= 0 {
				want = i
			}
			if got := firstZero(b[:n]); got != want {
				t.Fatalf("firstZero(%x) = %d, want %d", b[:n], got, want)
			}
			if n >= 1 && n <= 8 {
				w, ok := qualWord(b, 0, n)
				var ww uint64
				for i := n - 1; i >= 0; i-- {
					ww = ww<<8 | uint64(b[i])
				}
				if w != ww || ok != plain(b[:n]) {
					t.Fatalf("qualWord(%x, %d) = %x %v, want %x %v", b, n, w, ok, ww, plain(b[:n]))
				}
			}
		}
	}
	// An empty qualifier is never plain: its word holds the terminator.
	key := encodeCellKey(cellCoord{Table: 1, Row: []byte("r"), Family: []byte("f"), Qualifier: []byte{}, Timestamp: 1, Type: typePut})
	if _, ok := qualWord(key, len(key)-tailLen-2, 0); ok {
		t.Fatal("qualWord of an empty qualifier is plain")
	}
}
