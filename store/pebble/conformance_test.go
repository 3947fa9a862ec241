package pebble

import (
	"context"
	"testing"

	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/storetest"
)

// Small limits let the suite prove both by writing a few MiB, not a GiB.
const (
	testMaxCell = 1 << 20
	testMaxRow  = 4 << 20
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			st, err := Open(context.Background(), t.TempDir(), Options{MaxCellSize: testMaxCell, MaxRowSize: testMaxRow})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
		MaxCellSize:  testMaxCell,
		MaxRowSize:   testMaxRow,
		RegionCounts: true,
	})
}
