package pebble

import (
	"context"
	"testing"

	"github.com/denorm/denorm/store"
)

// TestSyncAfterAsyncWrites checks Sync succeeds after unsynced writes and
// fails with ErrClosed once the store is closed. (That the sync makes the
// earlier writes durable is Pebble's single ordered log; the crash test
// covers SyncWAL.)
func TestSyncAfterAsyncWrites(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, Options{Durability: store.AsyncWAL})
	if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	m := store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}}
	if err := st.Mutate(ctx, "t", m); err != nil {
		t.Fatal(err)
	}
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := st.Sync(ctx); err != store.ErrClosed {
		t.Fatalf("Sync after Close: %v", err)
	}
}
