package schema

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

func (d *decoder) workload(p *Plan, n *yaml.Node, line int) {
	w := p.Workload
	w.Line = line
	attrs, _ := d.mapping(n, "workload", "writes_per_second", "writes_by_entity", "entities", "keys")
	for _, a := range attrs {
		w.Lines[a.Key] = a.KeyN.Line
		sp := join("workload", a.Key)
		switch a.Key {
		case "writes_per_second":
			w.WritesPerSecond, _ = d.rate(a.Value, sp)
		case "writes_by_entity":
			entries, _ := d.mapping(a.Value, sp)
			w.EntityWrites = map[string]float64{}
			for _, e := range entries {
				ep := join(sp, e.Key)
				if p.Entity(e.Key) == nil {
					d.errAt(e.KeyN, ep, "unknown entity %q", e.Key)
					continue
				}
				if r, ok := d.rate(e.Value, ep); ok {
					w.EntityWrites[e.Key] = r
				}
			}
		case "entities":
			d.entityCounts(p, a.Value, sp)
		case "keys":
			d.distributions(p, a.Value, sp)
		}
	}
}

// entityCounts reads a bare count or a count per entity.
func (d *decoder) entityCounts(p *Plan, n *yaml.Node, path string) {
	w := p.Workload
	if v := resolve(n); v != nil && v.Kind == yaml.MappingNode {
		entries, _ := d.mapping(v, path)
		w.EntityCounts = map[string]int64{}
		for _, e := range entries {
			sp := join(path, e.Key)
			if p.Entity(e.Key) == nil {
				d.errAt(e.KeyN, sp, "unknown entity %q", e.Key)
				continue
			}
			if c, ok := d.integer(e.Value, sp, 0, MaxRecords); ok {
				w.EntityCounts[e.Key] = c
				w.Entities += c
			}
		}
		return
	}
	w.Entities, _ = d.integer(n, path, 0, MaxRecords)
}

var distKinds = []string{DistUniform, DistZipf, DistSequential, DistWeighted}

// distributions reads `entity.field: {distribution: kind, ...}`.
func (d *decoder) distributions(p *Plan, n *yaml.Node, path string) {
	entries, _ := d.mapping(n, path)
	for _, e := range entries {
		sp := join(path, e.Key)
		entName, field, ok := strings.Cut(e.Key, ".")
		ent := p.Entity(entName)
		if !ok || ent == nil {
			d.errAt(e.KeyN, sp, "%q is not entity.field of a declared entity", e.Key)
			continue
		}
		if ent.Field(field) == nil {
			d.errAt(e.KeyN, sp, "%q is not a field of entity %q", field, entName)
			continue
		}
		dist := &Distribution{Entity: entName, Field: field, Line: e.KeyN.Line}
		attrs, _ := d.mapping(e.Value, sp, "distribution", "cardinality", "skew", "values")
		lines := Lines{}
		for _, a := range attrs {
			lines[a.Key] = a.KeyN.Line
			ap := join(sp, a.Key)
			switch a.Key {
			case "distribution":
				dist.Kind, _ = d.enum(a.Value, ap, distKinds...)
			case "cardinality":
				dist.Cardinality, _ = d.integer(a.Value, ap, 1, MaxRecords)
			case "skew":
				dist.Skew, _ = d.number(a.Value, ap, 0)
			case "values":
				vals, _ := d.mapping(a.Value, ap)
				dist.Values = map[string]float64{}
				for _, v := range vals {
					if share, ok := d.number(v.Value, join(ap, v.Key), 0); ok {
						dist.Values[v.Key] = share
					}
				}
			}
		}
		switch dist.Kind {
		case "":
			if _, ok := lines["distribution"]; !ok {
				d.errLine(dist.Line, sp, "no distribution (%s)", strings.Join(distKinds, ", "))
			}
		case DistZipf:
			if dist.Cardinality == 0 {
				d.errLine(dist.Line, sp, "a zipf distribution needs a cardinality")
			}
		case DistWeighted:
			if len(dist.Values) == 0 {
				d.errLine(dist.Line, sp, "a weighted distribution needs values with their shares")
			}
		}
		if dist.Kind != DistWeighted && dist.Values != nil {
			d.errLine(lines["values"], join(sp, "values"), "values belong to weighted distributions")
		}
		p.Workload.Keys = append(p.Workload.Keys, dist)
	}
}

var clientKeys = []string{"rpc_timeout", "operation_timeout", "scanner_timeout",
	"write_buffer", "connection", "batching", "batch_size"}

func (d *decoder) client(p *Plan, n *yaml.Node, line int) {
	d.clientSettings(p.Client, n, "client", line, true)
}

// clientSettings reads the client section, or one of its profiles (which
// have no profiles of their own).
func (d *decoder) clientSettings(c *Client, n *yaml.Node, path string, line int, top bool) {
	c.Line = line
	keys := clientKeys
	if top {
		keys = append(append([]string(nil), clientKeys...), "profiles")
	}
	attrs, _ := d.mapping(n, path, keys...)
	for _, a := range attrs {
		c.Lines[a.Key] = a.KeyN.Line
		sp := join(path, a.Key)
		switch a.Key {
		case "profiles":
			entries, _ := d.mapping(a.Value, sp)
			for _, e := range entries {
				pp := join(sp, e.Key)
				if !isIdent(e.Key) {
					d.errAt(e.KeyN, pp, "%q is not a profile name", e.Key)
					continue
				}
				prof := &Client{Name: e.Key, Lines: Lines{}}
				d.clientSettings(prof, e.Value, pp, e.KeyN.Line, false)
				c.Profiles = append(c.Profiles, prof)
			}
		case "rpc_timeout":
			c.RPCTimeout, _ = d.duration(a.Value, sp)
		case "operation_timeout":
			c.OperationTimeout, _ = d.duration(a.Value, sp)
		case "scanner_timeout":
			c.ScannerTimeout, _ = d.duration(a.Value, sp)
		case "write_buffer":
			c.WriteBuffer, _ = d.size(a.Value, sp)
		case "connection":
			c.Connection, _ = d.enum(a.Value, sp, ConnectionPerProcess, ConnectionPerRequest)
		case "batching":
			c.Batching, _ = d.enum(a.Value, sp, BatchingBuffered, BatchingBatch, BatchingSingle)
		case "batch_size":
			if v, ok := d.integer(a.Value, sp, 1, 1<<31-1); ok {
				c.BatchSize = int(v)
			}
		}
	}
	if c.RPCTimeout > 0 && c.OperationTimeout > 0 && c.OperationTimeout < c.RPCTimeout {
		d.errLine(c.Lines["operation_timeout"], join(path, "operation_timeout"), "operation_timeout %v is shorter than rpc_timeout %v: no RPC could finish", c.OperationTimeout, c.RPCTimeout)
	}
}

// checkProfiles checks that every query's profile exists; the client
// section is read after the queries.
func (d *decoder) checkProfiles(p *Plan) {
	for _, q := range p.Queries {
		if q.Profile != "" && p.Client.Profile(q.Profile) == nil {
			d.errLine(q.Lines["profile"], join(join("queries", q.Name), "profile"), "unknown client profile %q (client.profiles declares %s)", q.Profile, profileNames(p.Client))
		}
	}
}

func profileNames(c *Client) string {
	if len(c.Profiles) == 0 {
		return "none"
	}
	names := make([]string, len(c.Profiles))
	for i, p := range c.Profiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Effective is the settings a profile's callers run with: the profile's
// own, else the client section's. A nil or unnamed profile is the section.
func (c *Client) Effective(profile string) *Client {
	p := c.Profile(profile)
	if p == nil {
		return c
	}
	out := *p
	if out.RPCTimeout == 0 {
		out.RPCTimeout = c.RPCTimeout
	}
	if out.OperationTimeout == 0 {
		out.OperationTimeout = c.OperationTimeout
	}
	if out.ScannerTimeout == 0 {
		out.ScannerTimeout = c.ScannerTimeout
	}
	if out.WriteBuffer == 0 {
		out.WriteBuffer = c.WriteBuffer
	}
	if out.Connection == "" {
		out.Connection = c.Connection
	}
	if out.Batching == "" {
		out.Batching = c.Batching
	}
	if out.BatchSize == 0 {
		out.BatchSize = c.BatchSize
	}
	return &out
}

func (d *decoder) ops(p *Plan, n *yaml.Node) {
	o := p.Ops
	o.Line = lineOf(n)
	attrs, _ := d.mapping(n, "ops", "presplit", "major_compaction", "offpeak", "durability", "regenerable", "region_max_filesize")
	for _, a := range attrs {
		o.Lines[a.Key] = a.KeyN.Line
		sp := join("ops", a.Key)
		switch a.Key {
		case "presplit":
			if v, ok := d.integer(a.Value, sp, 1, 100000); ok {
				o.Presplit = int(v)
			}
		case "major_compaction":
			o.MajorCompaction, _ = d.enum(a.Value, sp, CompactionManual, CompactionPeriodic)
		case "offpeak":
			if s, ok := d.str(a.Value, sp); ok {
				w, good := parseWindow(s)
				if !good {
					d.errAt(resolve(a.Value), sp, "offpeak %q: want whole hours such as 01:00-05:00", s)
					continue
				}
				o.Offpeak = w
			}
		case "durability":
			o.Durability, _ = d.enum(a.Value, sp, durabilities...)
		case "regenerable":
			o.Regenerable, _ = d.boolean(a.Value, sp)
		case "region_max_filesize":
			o.RegionMaxFilesize, _ = d.size(a.Value, sp)
		}
	}
}

// parseWindow reads "HH:00-HH:00" or "HH-HH"; HBase's off-peak window is in
// whole hours.
func parseWindow(s string) (*Window, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return nil, false
	}
	hour := func(x string) (int, bool) {
		x = strings.TrimSpace(x)
		if h, m, ok := strings.Cut(x, ":"); ok {
			if m != "00" {
				return 0, false
			}
			x = h
		}
		v, err := strconv.Atoi(x)
		return v, err == nil && v >= 0 && v <= 24
	}
	start, ok1 := hour(a)
	end, ok2 := hour(b)
	if !ok1 || !ok2 || start == end {
		return nil, false
	}
	return &Window{StartHour: start % 24, EndHour: end % 24}, true
}
