package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/denorm/denorm/doctor"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/hbase"
)

// slowLogRing is how many records a region server's ring buffer holds by
// default (hbase.regionserver.slowlog.ringbuffer.size); asking for as many
// reads the whole of it.
const slowLogRing = 256

// readSlowLog reads --slowlog: a saved file, or with an hbase:// URL the
// live ring buffers (slow calls and large responses) of every region server,
// through the Thrift2 gateway. Live records go through the same parser as a
// saved file of them.
func readSlowLog(ctx context.Context, src string) ([]doctor.SlowCall, error) {
	if !strings.HasPrefix(src, "hbase://") {
		f, err := os.Open(src)
		if err != nil {
			return nil, usageError(fmt.Errorf("slow log: %w", err))
		}
		defer f.Close()
		calls, err := doctor.ParseSlowLog(f)
		if err != nil {
			return nil, usageError(fmt.Errorf("--slowlog %s: %w", src, err))
		}
		return calls, nil
	}
	st, err := store.Open(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("slow log: %w", err)
	}
	defer st.Close()
	hs, ok := st.(*hbase.Store)
	if !ok {
		return nil, usageErrorf("--slowlog %s: not an HBase Thrift2 gateway", src)
	}
	var recs []hbase.SlowLogRecord
	for _, large := range []bool{false, true} {
		r, err := hs.SlowLog(ctx, large, slowLogRing)
		if err != nil {
			return nil, fmt.Errorf("slow log: %w", err)
		}
		recs = append(recs, r...)
	}
	if len(recs) == 0 {
		return nil, nil // empty ring buffers: nothing was slow
	}
	js, err := json.Marshal(recs)
	if err != nil {
		return nil, fmt.Errorf("slow log: %w", err)
	}
	return doctor.ParseSlowLog(bytes.NewReader(js))
}
