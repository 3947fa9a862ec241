package pebble

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/denorm/denorm/store"
)

// Disk usage grows with what a table holds, counts only that table, and
// shows compression: repetitive values take far less than their size.
func TestDiskUsage(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, name := range []string{"a", "b"} {
		if err := st.CreateTable(ctx, store.TableSpec{Name: name, Families: []store.FamilySpec{{Name: "d"}}}); err != nil {
			t.Fatal(err)
		}
	}
	empty, err := st.DiskUsage(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("abcd"), 256) // 1 KiB that compresses well
	var ms []store.RowMutation
	for i := 0; i < 2000; i++ {
		ms = append(ms, store.RowMutation{Row: []byte(fmt.Sprintf("r%05d", i)),
			Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("v"), Timestamp: 1, Value: value}}})
	}
	if _, err := st.Batch(ctx, "a", ms); err != nil {
		t.Fatal(err)
	}
	a, err := st.DiskUsage(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.DiskUsage(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	logical := int64(2000 * len(value))
	if a <= empty || a >= logical/2 {
		t.Fatalf("table a: %d bytes on disk (empty %d) for %d logical bytes: want more than empty and well under half", a, empty, logical)
	}
	if b >= a/10 {
		t.Fatalf("table b holds nothing but reports %d bytes (a: %d)", b, a)
	}
	if _, err := st.DiskUsage(ctx, "missing"); err == nil {
		t.Fatal("disk usage of a missing table succeeded")
	}
}
