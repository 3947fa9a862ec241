package pebble

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// Writes that read nothing share their rows' stripes; a write that reads
// its row (check-and-mutate, increment) waits for them, and they for it.
func TestRowLocksShareOnlyPlainWrites(t *testing.T) {
	var l rowLocks
	rows := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	first := l.lock(1, rows, nil, true)
	second := l.lock(1, rows[1:], nil, true) // does not wait for first
	got := make(chan struct{})
	go func() {
		held := l.lock(1, rows[2:], nil, false)
		close(got)
		l.unlock(held, false)
	}()
	select {
	case <-got:
		t.Fatal("an exclusive lock was granted while plain writes held the row")
	case <-time.After(50 * time.Millisecond):
	}
	l.unlock(first, true)
	select {
	case <-got:
		t.Fatal("an exclusive lock was granted while a plain write still held the row")
	case <-time.After(20 * time.Millisecond):
	}
	l.unlock(second, true)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the exclusive lock was not granted once the plain writes ended")
	}
	// And the other way round: a plain write waits for an exclusive one.
	ex := l.lock(1, rows[:1], nil, false)
	plain := make(chan struct{})
	go func() {
		held := l.lock(1, rows, nil, true)
		close(plain)
		l.unlock(held, true)
	}()
	select {
	case <-plain:
		t.Fatal("a plain write was granted a row a check-and-mutate held")
	case <-time.After(50 * time.Millisecond):
	}
	l.unlock(ex, false)
	<-plain
}

func TestReadsRow(t *testing.T) {
	for _, c := range []struct {
		m    store.RowMutation
		want bool
	}{
		{store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Timestamp: 5}}}, false},
		{store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.DeleteVersion, Family: "f", Timestamp: 5}}}, false},
		{store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f"}, {Kind: store.DeleteVersion, Family: "f", Timestamp: store.LatestTimestamp}}}, true},
	} {
		if got := readsRow(&c.m); got != c.want {
			t.Errorf("readsRow(%v) = %v, want %v", c.m.Mutations, got, c.want)
		}
	}
}

// The stripes spread keys that share long prefixes and differ in any byte
// evenly: no stripe holds twice its share of 100,000 order keys, of keys
// differing only in their first byte, or of one key's tables.
func TestStripesSpread(t *testing.T) {
	check := func(what string, keys func(i int) (uint64, []byte), n int) {
		t.Helper()
		var counts [256]int
		for i := range n {
			id, row := keys(i)
			counts[stripe(id, row)]++
		}
		for s, c := range counts {
			if c > 2*n/256 || c < n/256/2 {
				t.Errorf("%s: stripe %d holds %d of %d keys, want about %d", what, s, c, n, n/256)
				return
			}
		}
	}
	check("order keys", func(i int) (uint64, []byte) { return 7, fmt.Appendf(nil, "orders\x00c%06d\x00o%09d", i%977, i) }, 100000)
	check("first byte", func(i int) (uint64, []byte) {
		return 7, append([]byte{byte(i), byte(i >> 8)}, "-the-same-long-suffix-of-a-key"...)
	}, 65536)
	check("tables", func(i int) (uint64, []byte) { return uint64(i), []byte("row") }, 65536)
	check("short keys", func(i int) (uint64, []byte) { return 1, binary.BigEndian.AppendUint32(nil, uint32(i)) }, 65536)
}

func BenchmarkStripe(b *testing.B) {
	row := []byte("\x8a\x13orders\x00cust-000412\x00\x00ord-0000318822")
	var sink uint8
	for b.Loop() {
		sink ^= stripe(3, row)
	}
	_ = sink
}
