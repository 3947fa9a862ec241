package hbase

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// SlowLogRecord is one call a region server kept in its online slow-log
// ring buffer (HBase 2.4 and later, with
// hbase.regionserver.slowlog.buffer.enabled). The JSON names are those of
// HBase's own OnlineLogRecord, so a saved list reads like the shell's
// get_slowlog_responses output; LogType says which buffer it came from.
type SlowLogRecord struct {
	StartTime           int64  `json:"startTime"`
	ProcessingTime      int32  `json:"processingTime"`
	QueueTime           int32  `json:"queueTime"`
	ResponseSize        int64  `json:"responseSize"`
	ClientAddress       string `json:"clientAddress"`
	ServerClass         string `json:"serverClass"`
	MethodName          string `json:"methodName"`
	CallDetails         string `json:"callDetails"`
	Param               string `json:"param"`
	RegionName          string `json:"regionName,omitempty"`
	UserName            string `json:"userName"`
	MultiGetsCount      int32  `json:"multiGetsCount,omitempty"`
	MultiMutationsCount int32  `json:"multiMutationsCount,omitempty"`
	MultiServiceCalls   int32  `json:"multiServiceCalls,omitempty"`
	LogType             string `json:"logType"` // SLOW_LOG or LARGE_LOG
	Server              string `json:"server"`  // host:port of the region server that kept it
}

// SlowLog reads the slow-call (large false) or large-response (large true)
// ring buffer of every region server that hosts a region, newest records
// first, at most limit from each server (HBase's own default, 10, when limit
// is not positive). The gateway asks each server itself; the servers are
// found in hbase:meta because Thrift2 has no call that lists them.
func (s *Store) SlowLog(ctx context.Context, large bool, limit int) ([]SlowLogRecord, error) {
	servers, err := s.regionServers(ctx)
	if err != nil {
		return nil, fmt.Errorf("hbase: read the slow log: %w", err)
	}
	logType, name := hbase2.TLogType_SLOW_LOG, "SLOW_LOG"
	if large {
		logType, name = hbase2.TLogType_LARGE_LOG, "LARGE_LOG"
	}
	if limit <= 0 {
		limit = 10
	}
	var out []SlowLogRecord
	for _, sn := range servers {
		filter := &hbase2.TLogQueryFilter{Limit: int32(limit), LogType: logType, FilterByOperator: hbase2.TFilterByOperator_OR}
		var recs []*hbase2.TOnlineLogRecord
		err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
			recs, err = c.GetSlowLogResponses(ctx, []*hbase2.TServerName{sn}, filter)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("hbase: read the %s of %s: %w", name, sn.HostName, err)
		}
		where := sn.HostName + ":" + strconv.Itoa(int(sn.GetPort()))
		for _, r := range recs {
			out = append(out, SlowLogRecord{
				StartTime: r.StartTime, ProcessingTime: r.ProcessingTime, QueueTime: r.QueueTime,
				ResponseSize: r.ResponseSize, ClientAddress: r.ClientAddress, ServerClass: r.ServerClass,
				MethodName: r.MethodName, CallDetails: r.CallDetails, Param: r.Param,
				RegionName: r.GetRegionName(), UserName: r.UserName, MultiGetsCount: r.MultiGetsCount,
				MultiMutationsCount: r.MultiMutationsCount, MultiServiceCalls: r.MultiServiceCalls,
				LogType: name, Server: where,
			})
		}
	}
	return out, nil
}

// regionServers lists the servers hbase:meta places regions on, from its
// info:server ("host:port") and info:serverstartcode (8-byte big-endian)
// cells. A server without regions keeps no record worth reading anyway.
func (s *Store) regionServers(ctx context.Context) ([]*hbase2.TServerName, error) {
	sc, err := s.Scan(ctx, "hbase:meta", store.Scan{Columns: []store.Column{
		{Family: "info", Qualifier: []byte("server")},
		{Family: "info", Qualifier: []byte("serverstartcode")},
	}})
	if err != nil {
		return nil, fmt.Errorf("list region servers from hbase:meta: %w", err)
	}
	defer sc.Close()
	seen := map[string]*hbase2.TServerName{}
	for sc.Next(ctx) {
		r := sc.Row()
		cell, ok := r.Latest("info", []byte("server"))
		addr := string(cell.Value)
		if !ok {
			continue
		}
		host, portText, ok := strings.Cut(addr, ":")
		port, perr := strconv.Atoi(portText)
		if !ok || perr != nil {
			continue
		}
		sn := &hbase2.TServerName{HostName: host}
		p := int32(port)
		sn.Port = &p
		if c, ok := r.Latest("info", []byte("serverstartcode")); ok && len(c.Value) == 8 {
			var v int64
			for _, b := range c.Value {
				v = v<<8 | int64(b)
			}
			sn.StartCode = &v
		}
		seen[addr] = sn
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("list region servers from hbase:meta: %w", err)
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("hbase:meta names no region server")
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*hbase2.TServerName, 0, len(keys))
	for _, k := range keys {
		out = append(out, seen[k])
	}
	return out, nil
}
