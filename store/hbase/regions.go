package hbase

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"strconv"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// Regions lists the table's regions in key order. Thrift2 exposes no
// request counters, so ReadRequests and WriteRequests are 0; the region ids
// are HBase's encoded region names, which key the counters in a region
// server's /jmx.
func (s *Store) Regions(ctx context.Context, table string) ([]store.Region, error) {
	what := "list regions of " + table
	var locs []*hbase2.THRegionLocation
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		locs, err = c.GetAllRegionLocations(ctx, s.wireName(table))
		return err
	})
	if err != nil {
		return nil, s.explain(ctx, what, table, nil, err)
	}
	var out []store.Region
	for _, l := range locs {
		ri := l.GetRegionInfo()
		if ri == nil || ri.GetReplicaId() != 0 {
			continue // read replicas repeat the primary's range
		}
		r := store.Region{
			Table: table,
			ID:    encodedRegionName(ri.TableName, ri.StartKey, ri.RegionId),
			Start: nonNil(ri.StartKey),
			End:   nonNil(ri.EndKey),
		}
		if sn := l.GetServerName(); sn != nil {
			r.Server = net.JoinHostPort(sn.HostName, strconv.Itoa(int(sn.GetPort())))
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		// HBase answers an empty list for a table it does not have.
		exists, xerr := s.tableExists(ctx, table)
		if xerr == nil && !exists {
			return nil, fmt.Errorf("hbase: %s: %w", what, store.ErrTableNotFound)
		}
		return nil, fmt.Errorf("hbase: %s: the server reported no regions", what)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Start, out[j].Start) < 0 })
	return out, nil
}

// encodedRegionName is the 32-hex-digit name HBase derives for a region:
// the MD5 of "<table>,<start key>,<region id>" (HRegionInfo's new format).
func encodedRegionName(table, start []byte, regionID int64) string {
	var b []byte
	b = append(b, table...)
	b = append(b, ',')
	b = append(b, start...)
	b = append(b, ',')
	b = strconv.AppendInt(b, regionID, 10)
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}
