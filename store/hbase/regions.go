package hbase

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// Regions lists the table's regions in key order. Thrift2 exposes no
// request counters, so ReadRequests and WriteRequests are 0. The region ids
// are HBase's encoded region names, the ones a region server's /jmx keys its
// counters by; the gateway's region locations leave the region id out, so
// the names are read from the table's rows in hbase:meta.
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
		r := store.Region{Table: table, Start: nonNil(ri.StartKey), End: nonNil(ri.EndKey)}
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
	names, err := s.metaRegionNames(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("hbase: %s: %w", what, err)
	}
	for i := range out {
		out[i].ID = names[string(out[i].Start)]
		if out[i].ID == "" {
			// Not in hbase:meta (hbase:meta itself, or a region in
			// transition): a readable stand-in that is still unique.
			out[i].ID = string(s.wireName(table)) + "," + store.Printable(out[i].Start)
		}
	}
	return out, nil
}

// metaRegionNames maps each current region's start key to its encoded name,
// from the table's rows in hbase:meta. A meta row key is
// "<table>,<start key>,<region id>.<encoded name>."; a split parent keeps
// its row (with info:splitA and info:splitB) until it is cleaned up, sharing
// its start key with its first daughter, so such rows are skipped.
func (s *Store) metaRegionNames(ctx context.Context, table string) (map[string]string, error) {
	full := string(s.wireName(table))
	// hbase:meta sorts its rows by table, then start key, then region id,
	// not as plain bytes: "<table>,," is its first possible row of the
	// table (as HBase's own meta reader starts), and "-", the byte after
	// ",", ends the table's rows since table names cannot hold a ",".
	sc, err := s.Scan(ctx, "hbase:meta", store.Scan{
		Start: []byte(full + ",,"),
		Stop:  []byte(full + "-"),
		Columns: []store.Column{
			{Family: "info", Qualifier: []byte("regioninfo")},
			{Family: "info", Qualifier: []byte("splitA")},
			{Family: "info", Qualifier: []byte("splitB")},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("read region names from hbase:meta: %w", err)
	}
	defer sc.Close()
	names := map[string]string{}
	for sc.Next(ctx) {
		r := sc.Row()
		if _, split := r.Latest("info", []byte("splitA")); split {
			continue
		}
		if start, enc, ok := parseMetaRow(r.Key, full); ok {
			names[string(start)] = enc
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read region names from hbase:meta: %w", err)
	}
	return names, nil
}

// parseMetaRow splits a meta row key of table into the region's start key
// and encoded name.
func parseMetaRow(key []byte, table string) (start []byte, encoded string, ok bool) {
	prefix := table + ","
	if !bytes.HasPrefix(key, []byte(prefix)) || len(key) < len(prefix)+2 || key[len(key)-1] != '.' {
		return nil, "", false
	}
	body := key[:len(key)-1]
	dot := bytes.LastIndexByte(body, '.')
	if dot < 0 {
		return nil, "", false
	}
	encoded = string(body[dot+1:])
	if len(encoded) != 32 || strings.Trim(encoded, "0123456789abcdef") != "" {
		return nil, "", false
	}
	comma := bytes.LastIndexByte(body[:dot], ',')
	id := string(body[comma+1 : dot])
	if comma < len(prefix) || id == "" || strings.Trim(id, "0123456789") != "" {
		return nil, "", false
	}
	return body[len(prefix):comma], encoded, true
}
