package cost

import (
	"fmt"

	"github.com/denorm/denorm/schema"
)

// DefaultReplication is HDFS's default dfs.replication: every byte HBase
// writes is stored three times.
const DefaultReplication = 3

// Options tune an estimate.
type Options struct {
	// Replication multiplies on-disk bytes for the replicated figures. 0
	// means DefaultReplication.
	Replication int
}

// TableEstimate is one table's cost per logical record, before block
// encoding and compression.
type TableEstimate struct {
	Table          string   `json:"table"`
	Entity         string   `json:"entity"`
	Role           string   `json:"role"`
	Line           int      `json:"line"`
	RowsPerRecord  float64  `json:"rows_per_record"`
	CellsPerRecord float64  `json:"cells_per_record"`
	KeyBytes       int64    `json:"key_bytes"`
	ValueBytes     float64  `json:"value_bytes"`      // the values alone
	Bytes          float64  `json:"bytes"`            // KeyValues: 20 + row + family + qualifier + value per cell
	Overhead       float64  `json:"overhead"`         // Bytes / ValueBytes; 0 when there are no value bytes
	Replicated     float64  `json:"bytes_replicated"` // Bytes x replication
	Shared         bool     `json:"shared"`           // fast counter rows, shared by many records: not in the entity total
	CounterMode    string   `json:"counter_mode,omitempty"`
	Assumptions    []string `json:"assumptions"`
}

// EntityTotal is every table of one entity together.
type EntityTotal struct {
	Entity     string  `json:"entity"`
	ValueBytes float64 `json:"value_bytes"`
	Bytes      float64 `json:"bytes"`
	Overhead   float64 `json:"overhead"`
	Replicated float64 `json:"bytes_replicated"`
	// Records is the workload's entity count (0 when not declared), and
	// the Total figures that many records.
	Records         int64   `json:"records"`
	TotalBytes      float64 `json:"total_bytes"`
	TotalReplicated float64 `json:"total_bytes_replicated"`
}

// Estimate is the cost of a whole schema.
type Estimate struct {
	Replication int             `json:"replication"`
	Tables      []TableEstimate `json:"tables"`
	Entities    []EntityTotal   `json:"entities"`
	// TotalBytes sums every entity's records (those the workload counts):
	// the whole data set, fast counters aside (exact contributions and
	// bounded records grow with the records and are in), before and after
	// replication.
	TotalBytes      float64 `json:"total_bytes"`
	TotalReplicated float64 `json:"total_bytes_replicated"`
}

// EstimatePlan computes bytes per logical record for every table of the
// plan from the KeyValue layout.
func EstimatePlan(p *schema.Plan, opts Options) (Estimate, error) {
	rep := opts.Replication
	if rep == 0 {
		rep = DefaultReplication
	}
	if rep < 0 {
		return Estimate{}, fmt.Errorf("cost: replication %d: must be 1 or more", rep)
	}
	est := Estimate{Replication: rep, Tables: []TableEstimate{}, Entities: []EntityTotal{}}
	totals := map[string]int{} // entity -> index in est.Entities
	for _, t := range p.Tables {
		l := TableLayout(p, t)
		te := TableEstimate{
			Table: t.Name, Entity: t.Entity, Role: string(t.Role), Line: t.Line,
			RowsPerRecord: l.RowsPerRecord, CellsPerRecord: l.CellsPerRecord(), KeyBytes: l.KeyBytes,
			Shared: SharedCounter(t), Assumptions: append([]string{}, l.Assumed...),
		}
		if t.Counter != nil {
			te.CounterMode = string(t.Counter.Mode)
			if te.CounterMode == "" {
				te.CounterMode = string(schema.CounterFast)
			}
		}
		for _, c := range l.Cells {
			n := c.PerRow * l.RowsPerRecord
			te.ValueBytes += n * float64(c.ValBytes)
			te.Bytes += n * float64(CellBytes(int(l.KeyBytes), len(c.Family), int(c.QualBytes), int(c.ValBytes)))
		}
		te.Overhead = ratio(te.Bytes, te.ValueBytes)
		te.Replicated = te.Bytes * float64(rep)
		est.Tables = append(est.Tables, te)
		if te.Shared {
			continue
		}
		i, ok := totals[t.Entity]
		if !ok {
			i = len(est.Entities)
			totals[t.Entity] = i
			est.Entities = append(est.Entities, EntityTotal{Entity: t.Entity})
		}
		tot := &est.Entities[i]
		tot.ValueBytes += te.ValueBytes
		tot.Bytes += te.Bytes
	}
	for i := range est.Entities {
		tot := &est.Entities[i]
		tot.Overhead = ratio(tot.Bytes, tot.ValueBytes)
		tot.Replicated = tot.Bytes * float64(rep)
		tot.Records = records(p, tot.Entity)
		tot.TotalBytes = tot.Bytes * float64(tot.Records)
		tot.TotalReplicated = tot.TotalBytes * float64(rep)
		est.TotalBytes += tot.TotalBytes
		est.TotalReplicated += tot.TotalReplicated
	}
	return est, nil
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// records is the declared number of entities of one kind: the per-entity
// count, or the plan-wide count when the plan has a single entity.
func records(p *schema.Plan, entity string) int64 {
	w := p.Workload
	if w == nil {
		return 0
	}
	if n, ok := w.EntityCounts[entity]; ok {
		return n
	}
	if len(w.EntityCounts) == 0 && len(p.Entities) == 1 {
		return w.Entities
	}
	return 0
}
