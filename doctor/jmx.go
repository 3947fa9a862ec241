package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Region holds the metrics one RegionServer reports for one region.
type Region struct {
	Namespace string
	Table     string
	// Encoded is the encoded region name: 32 hex digits for user regions,
	// but hbase:meta reports the legacy number 1588230740, so it is any run
	// of hex digits.
	Encoded string
	Metrics map[string]float64
	// Stores holds per-family metrics when the server reports them
	// (keys ..._region_<r>_store_<family>_metric_<m>).
	Stores map[string]map[string]float64
}

// FullTable is ns:table, or just the table in the default namespace.
func (r *Region) FullTable() string { return fullTable(r.Namespace, r.Table) }

func fullTable(ns, table string) string {
	if ns == "" || ns == "default" {
		return table
	}
	return ns + ":" + table
}

// Snapshot is what one /jmx document says about one RegionServer at one
// moment. Maps are never nil after ParseJMX.
type Snapshot struct {
	Source  string // URL or file name, for evidence
	Server  string // tag.serverName of the Server bean, else tag.Hostname
	Regions map[string]*Region
	// Tables maps a table (ns:table) to its sub=Tables metrics.
	Tables map[string]map[string]float64
	// ServerMetrics and IPC are the numeric values of the sub=Server and
	// sub=IPC beans.
	ServerMetrics map[string]float64
	IPC           map[string]float64
	// Skipped counts metric values left out because they are not numbers
	// (for a region's metric) or are out of any counter's range (1e308, a
	// negative count); SkippedExamples holds the first few, for a note.
	Skipped         int
	SkippedExamples []string
}

// maxMetric is far beyond any real counter (a Java long stops at 9.2e18)
// and any gauge; a larger value is a broken or hostile document.
const maxMetric = 1e18

// skip records a metric value left out.
func (s *Snapshot) skip(key string, raw json.RawMessage, why string) {
	s.Skipped++
	if len(s.SkippedExamples) < 3 {
		s.SkippedExamples = append(s.SkippedExamples, fmt.Sprintf("%s = %s (%s)", cut(key, 120), cut(string(raw), 40), why))
	}
}

// sane checks a metric value: finite, and within maxMetric either way
// (gauges such as a latency's mean are never negative either, but a
// negative delta of two counters is handled by the rules, not here).
func sane(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) <= maxMetric }

func newSnapshot(source string) *Snapshot {
	return &Snapshot{
		Source:        source,
		Regions:       map[string]*Region{},
		Tables:        map[string]map[string]float64{},
		ServerMetrics: map[string]float64{},
		IPC:           map[string]float64{},
	}
}

// The namespace cannot hold '_' in HBase but table and family names can, so
// the pattern anchors on the _region_<hex>_ part and lets the table take
// everything before it.
var (
	regionKey = regexp.MustCompile(`^Namespace_([^_]*)_table_(.+)_region_([0-9a-f]+)(?:_store_(.+?))?_metric_(.+)$`)
	tableKey  = regexp.MustCompile(`^Namespace_([^_]*)_table_(.+)_metric_(.+)$`)
)

// ParseJMX reads a /jmx JSON document (the whole of /jmx or any ?qry= part
// of it) and keeps the RegionServer beans. Beans and keys it does not know
// are skipped; only a document that is not a JSON object is an error.
func ParseJMX(r io.Reader, source string) (*Snapshot, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read jmx %s: %w", source, err)
	}
	return parseJMXBytes(data, source)
}

func parseJMXBytes(data []byte, source string) (*Snapshot, error) {
	var doc struct {
		Beans []map[string]json.RawMessage `json:"beans"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parse jmx %s: %w", source, err)
	}
	s := newSnapshot(source)
	for _, bean := range doc.Beans {
		s.addBean(bean)
	}
	return s, nil
}

// merge adds another document's beans about the same server (a live sample
// fetches each sub= bean on its own).
func (s *Snapshot) merge(o *Snapshot) {
	// The Server bean's tag.serverName (host,port,startcode) names the
	// server better than the other beans' bare tag.Hostname.
	if s.Server == "" || (len(o.ServerMetrics) > 0 && o.Server != "") {
		s.Server = o.Server
	}
	for k, v := range o.Regions {
		s.Regions[k] = v
	}
	for k, v := range o.Tables {
		s.Tables[k] = v
	}
	for k, v := range o.ServerMetrics {
		s.ServerMetrics[k] = v
	}
	for k, v := range o.IPC {
		s.IPC[k] = v
	}
	s.Skipped += o.Skipped
	for _, e := range o.SkippedExamples {
		if len(s.SkippedExamples) < 3 {
			s.SkippedExamples = append(s.SkippedExamples, e)
		}
	}
}

func (s *Snapshot) addBean(bean map[string]json.RawMessage) {
	name := jsonString(bean["name"])
	if !strings.HasPrefix(name, "Hadoop:service=HBase,name=RegionServer,") {
		return
	}
	sub := name[strings.LastIndex(name, "sub=")+len("sub="):]
	if host := jsonString(bean["tag.Hostname"]); host != "" && s.Server == "" {
		s.Server = host
	}
	switch sub {
	case "Regions":
		for k, raw := range bean {
			m := regionKey.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			v, ok := jsonNumber(raw)
			if !ok {
				s.skip(k, raw, "not a number")
				continue
			}
			if !sane(v) {
				s.skip(k, raw, "out of range")
				continue
			}
			reg := s.Regions[m[3]]
			if reg == nil {
				reg = &Region{Namespace: m[1], Table: m[2], Encoded: m[3],
					Metrics: map[string]float64{}, Stores: map[string]map[string]float64{}}
				s.Regions[m[3]] = reg
			}
			if m[4] == "" {
				reg.Metrics[m[5]] = v
				continue
			}
			st := reg.Stores[m[4]]
			if st == nil {
				st = map[string]float64{}
				reg.Stores[m[4]] = st
			}
			st[m[5]] = v
		}
	case "Tables", "TableLatencies":
		for k, raw := range bean {
			// TableLatencies holds a dozen statistics per operation and
			// table; only the operation counts are read.
			if sub == "TableLatencies" && !strings.HasSuffix(k, "_num_ops") {
				continue
			}
			m := tableKey.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			v, ok := jsonNumber(raw)
			if !ok {
				s.skip(k, raw, "not a number")
				continue
			}
			if !sane(v) {
				s.skip(k, raw, "out of range")
				continue
			}
			t := fullTable(m[1], m[2])
			if s.Tables[t] == nil {
				s.Tables[t] = map[string]float64{}
			}
			s.Tables[t][m[3]] = v
		}
	case "Server":
		if sn := jsonString(bean["tag.serverName"]); sn != "" {
			s.Server = sn
		}
		s.numbers(bean, s.ServerMetrics)
	case "IPC":
		s.numbers(bean, s.IPC)
	}
}

func (s *Snapshot) numbers(bean map[string]json.RawMessage, into map[string]float64) {
	for k, raw := range bean {
		if v, ok := jsonNumber(raw); ok {
			if !sane(v) {
				s.skip(k, raw, "out of range")
				continue
			}
			into[k] = v
		}
	}
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// jsonNumber accepts JSON numbers and numeric strings (some Hadoop metrics
// are published as strings); anything else is not a metric value.
func jsonNumber(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false
	}
	if raw[0] == '"' {
		s := jsonString(raw)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	return v, true
}
