package hbase

import (
	"testing"

	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/storetest"
)

// TestConformance runs the store conformance suite against a real HBase.
//
// The row limit is checked on the client here (max_row_size): HBase's own
// limit defaults to 1 GiB, too big for the suite to prove. 8 MiB is low
// enough to prove cheaply and above the 5 MiB row the cell-limit subtest
// reads back.
// MajorCompact is not possible over Thrift2, so the compaction subtests
// skip themselves on store.ErrUnsupported.
func TestConformance(t *testing.T) {
	raw := withDefaultParam(t, liveURL(t), "max_row_size", "8388608")
	probe := openLive(t, raw)
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store {
			return openLive(t, raw)
		},
		MaxCellSize: probe.opts.MaxCellSize,
		MaxRowSize:  probe.opts.MaxRowSize,
	})
}
