package doctor

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// TestLiveMemstoreBlocking writes into a table whose own settings make its
// region block writes at 256 KB of memstore (a 128 KB flush size, block
// multiplier 2): every 500 KB batch leaves the memstore over the limit
// until a flush ends, so the batches that follow are turned away with
// RegionTooBusyException (the gateway retries them) and the server's
// blockedRequestCount grows. The doctor must report memstore-blocking.
func TestLiveMemstoreBlocking(t *testing.T) {
	l := openLive(t, 3*time.Minute)
	table := fmt.Sprintf("doctor_blocking_%d", time.Now().UnixNano())
	// store.TableSpec has no table attributes: create the table through the
	// gateway directly, which passes them on as descriptor values.
	if err := createWithAttributes(l.ctx, l.url, table, map[string]string{
		"MEMSTORE_FLUSHSIZE": "131072",
		// HBase refuses a flush size under 1 MB unless its sanity checks
		// are off for the table.
		"hbase.table.sanity.checks":               "false",
		"hbase.hregion.memstore.block.multiplier": "2",
		// A region this small would split at once, and the split would
		// reset what we measure.
		"SPLIT_POLICY": "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy",
	}); err != nil {
		t.Fatal(err)
	}
	l.dropAtEnd(t, table)
	client := &http.Client{Timeout: 30 * time.Second}
	before, err := FetchJMX(l.ctx, client, l.jmx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	value := bytes.Repeat([]byte("v"), 100<<10)
	for i := 0; i < 60; i++ {
		var batch []store.RowMutation
		for j := 0; j < 5; j++ {
			batch = append(batch, store.RowMutation{Row: []byte(fmt.Sprintf("r%06d", i*5+j)),
				Mutations: []store.Mutation{{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1, Value: value}}})
		}
		l.batch(t, table, batch)
	}
	// The Server bean refreshes every hbase.regionserver.metrics.period (5 s).
	rep := l.diagnoseUntil(t, client, before, start, Options{}, "memstore-blocking after 60 batches", func(rep Report) bool { return rep.Has("memstore-blocking", "") })
	for _, f := range rep.Findings {
		if f.Rule == "memstore-blocking" {
			t.Logf("%s %v", f, f.Evidence)
		}
	}
}

// createWithAttributes creates table (family f) through the Thrift2
// gateway of an hbase:// URL, with table descriptor values.
func createWithAttributes(ctx context.Context, hbaseURL, table string, attrs map[string]string) error {
	c, closeConn, err := gateway(hbaseURL)
	if err != nil {
		return err
	}
	defer closeConn()
	desc := &hbase2.TTableDescriptor{
		TableName:  &hbase2.TTableName{Ns: []byte("default"), Qualifier: []byte(table)},
		Columns:    []*hbase2.TColumnFamilyDescriptor{{Name: []byte("f")}},
		Attributes: map[string][]byte{},
	}
	for k, v := range attrs {
		desc.Attributes[k] = []byte(v)
	}
	if err := c.CreateTable(ctx, desc, nil); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	return nil
}

// gateway dials the Thrift2 gateway of an hbase:// URL for the calls
// store.Store does not offer; the wire format is the test environment's
// (unframed, binary).
func gateway(hbaseURL string) (*hbase2.THBaseServiceClient, func(), error) {
	u, err := url.Parse(hbaseURL)
	if err != nil {
		return nil, nil, err
	}
	cfg := &thrift.TConfiguration{ConnectTimeout: 10 * time.Second, SocketTimeout: 2 * time.Minute}
	tr := thrift.NewTBufferedTransport(thrift.NewTSocketConf(u.Host, cfg), 8192)
	if err := tr.Open(); err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", u.Host, err)
	}
	prot := thrift.NewTBinaryProtocolConf(tr, cfg)
	return hbase2.NewTHBaseServiceClient(thrift.NewTStandardClient(prot, prot)), func() { _ = tr.Close() }, nil
}
