package pebble

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"reflect"
	"testing"
)

// hbaseCompare orders two cell coordinates as HBase's KeyValue comparator
// does, computed from the coordinates, not their encodings.
func hbaseCompare(a, b cellCoord) int {
	if c := cmp.Compare(a.Table, b.Table); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Row, b.Row); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Qualifier, b.Qualifier); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Timestamp, a.Timestamp); c != 0 {
		return c
	}
	return cmp.Compare(b.Type, a.Type)
}

var keySeeds = []cellCoord{
	{Table: 1, Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 5, Type: typePut},
	{Table: 1, Row: []byte("a\x00"), Family: []byte("f"), Qualifier: []byte{}, Timestamp: 5, Type: typeDeleteFamily},
	{Table: 1, Row: []byte{0x00}, Family: []byte("f"), Qualifier: []byte{0xff, 0x00}, Timestamp: 0, Type: typeDelete},
	{Table: 2, Row: []byte{0xff, 0xff}, Family: []byte("f\x00g"), Qualifier: []byte{0x00, 0x00}, Timestamp: 1<<62 + 3, Type: typeDeleteColumn},
	{Table: 1, Row: []byte{}, Family: []byte{}, Qualifier: []byte{}, Timestamp: -1, Type: typeDeleteFamilyVersion},
}

func coordFrom(table uint64, row, fam, qual []byte, ts int64, typ byte) cellCoord {
	return cellCoord{Table: table, Row: append([]byte{}, row...), Family: append([]byte{}, fam...),
		Qualifier: append([]byte{}, qual...), Timestamp: ts, Type: typ}
}

func FuzzCellKeyRoundTrip(f *testing.F) {
	for _, c := range keySeeds {
		f.Add(c.Table, c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type)
	}
	f.Fuzz(func(t *testing.T, table uint64, row, fam, qual []byte, ts int64, typ byte) {
		in := coordFrom(table, row, fam, qual, ts, typ)
		key := encodeCellKey(in)
		out, err := decodeCellKey(key)
		if err != nil {
			t.Fatalf("decode %x: %v", key, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip of %+v gave %+v (key %x)", in, out, key)
		}
		var rk rawKey
		if err := parseKey(key, &rk); err != nil {
			t.Fatal(err)
		}
		if got := rowOfPrefix(nil, rk.rowPrefix); !bytes.Equal(got, row) {
			t.Fatalf("row prefix gives row %x, want %x", got, row)
		}
		if !bytes.HasPrefix(key, appendRowPrefix(nil, table, row)) {
			t.Fatalf("key %x does not start with its row prefix", key)
		}
		// Truncated keys must be refused, never decoded as something else.
		for i := range key {
			if _, err := decodeCellKey(key[:i]); err == nil {
				t.Fatalf("truncated key %x decoded", key[:i])
			}
		}
	})
}

func FuzzCellKeyDecode(f *testing.F) {
	for _, c := range keySeeds {
		f.Add(encodeCellKey(c))
	}
	f.Add([]byte{spaceData, 0, 0, 0, 0, 0, 0, 0, 1, 0, 7})
	f.Fuzz(func(t *testing.T, key []byte) {
		c, err := decodeCellKey(key)
		if err != nil {
			return
		}
		// Whatever decodes must be the one encoding of what it decodes to.
		if again := encodeCellKey(c); !bytes.Equal(again, key) {
			t.Fatalf("key %x decodes to %+v which encodes to %x", key, c, again)
		}
	})
}

func sign(x int) int { return cmp.Compare(x, 0) }

func FuzzCellKeyOrder(f *testing.F) {
	for i, a := range keySeeds {
		b := keySeeds[(i+1)%len(keySeeds)]
		f.Add(a.Table%3, a.Row, a.Family, a.Qualifier, a.Timestamp, a.Type, b.Table%3, b.Row, b.Family, b.Qualifier, b.Timestamp, b.Type)
	}
	// Prefixes and zero bytes at every position are where escaping can go wrong.
	f.Add(uint64(1), []byte("a"), []byte("f"), []byte(""), int64(3), typePut, uint64(1), []byte("a\x00"), []byte("f"), []byte(""), int64(3), typePut)
	f.Add(uint64(1), []byte("a"), []byte("f"), []byte("\x00"), int64(3), typePut, uint64(1), []byte("a"), []byte("f\x00"), []byte(""), int64(3), typePut)
	f.Add(uint64(1), []byte("a"), []byte("f"), []byte("q"), int64(3), typePut, uint64(1), []byte("a"), []byte("f"), []byte("q"), int64(3), typeDeleteColumn)
	f.Add(uint64(1), []byte("a"), []byte("f"), []byte("q"), int64(-3), typePut, uint64(1), []byte("a"), []byte("f"), []byte("q"), int64(3), typePut)
	f.Fuzz(func(t *testing.T, t1 uint64, r1, f1, q1 []byte, ts1 int64, ty1 byte, t2 uint64, r2, f2, q2 []byte, ts2 int64, ty2 byte) {
		a := coordFrom(t1%4, r1, f1, q1, ts1, ty1)
		b := coordFrom(t2%4, r2, f2, q2, ts2, ty2)
		want := hbaseCompare(a, b)
		if got := sign(bytes.Compare(encodeCellKey(a), encodeCellKey(b))); got != want {
			t.Fatalf("order of encodings %d, HBase order %d\n a %+v\n b %+v", got, want, a, b)
		}
	})
}

// TestCellKeyOrderRandom sorts many random coordinates both ways; it covers
// more pairs per run than the fuzz seeds do in an ordinary go test.
func TestCellKeyOrderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []byte{0x00, 0x01, 'a', 0xfe, 0xff}
	part := func() []byte {
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	types := []byte{typePut, typeDelete, typeDeleteFamilyVersion, typeDeleteColumn, typeDeleteFamily}
	cs := make([]cellCoord, 3000)
	for i := range cs {
		cs[i] = cellCoord{Table: uint64(rng.IntN(2)), Row: part(), Family: part(), Qualifier: part(),
			Timestamp: int64(rng.IntN(5)) - 2, Type: types[rng.IntN(len(types))]}
	}
	for i := 1; i < len(cs); i++ {
		a, b := cs[i-1], cs[i]
		if got, want := sign(bytes.Compare(encodeCellKey(a), encodeCellKey(b))), hbaseCompare(a, b); got != want {
			t.Fatalf("order of encodings %d, HBase order %d\n a %+v\n b %+v", got, want, a, b)
		}
	}
}
