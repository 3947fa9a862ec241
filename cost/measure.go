package cost

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// DiskUser is the optional interface of stores that can say how many bytes
// a table takes on disk: its data files after the store's own encoding and
// compression, with everything written so far flushed. Measure calls
// MajorCompact first, so tombstones and memtables do not blur the figure.
type DiskUser interface {
	DiskUsage(ctx context.Context, table string) (int64, error)
}

// TableMeasure is what N synthetic records took in one table.
type TableMeasure struct {
	Table   string `json:"table"`
	Entity  string `json:"entity"`
	Records int    `json:"records"`
	Rows    int64  `json:"rows"`
	Cells   int64  `json:"cells"`
	// LogicalBytes is the KeyValue size of every cell written: what HBase
	// holds before block encoding and compression.
	LogicalBytes     int64   `json:"logical_bytes"`
	LogicalPerRecord float64 `json:"logical_bytes_per_record"`
	// DiskBytes is what the store reports on disk, -1 when it cannot.
	DiskBytes     int64   `json:"disk_bytes"`
	DiskPerRecord float64 `json:"disk_bytes_per_record"`
	// EstimatePerRecord is EstimatePlan's figure, for comparison.
	EstimatePerRecord float64 `json:"estimate_bytes_per_record"`
}

// Measurement is the result of Measure.
type Measurement struct {
	Records      int            `json:"records"`
	DiskReported bool           `json:"disk_reported"`
	Tables       []TableMeasure `json:"tables"`
}

// Measure creates the plan's tables in st, writes n synthetic records of
// every entity through a buffered mutator, and reports bytes per record:
// logical (the KeyValue formula over the cells actually written) and, when
// st implements DiskUser, on disk after the store's compression. Counter
// tables are left out: their rows are shared by many records. The tables
// must not exist yet; use a scratch store.
func Measure(ctx context.Context, st store.Store, p *schema.Plan, n int) (Measurement, error) {
	if n <= 0 {
		return Measurement{}, fmt.Errorf("cost: measure: record count %d: must be positive", n)
	}
	est, err := EstimatePlan(p, Options{Replication: 1})
	if err != nil {
		return Measurement{}, err
	}
	estimate := map[string]float64{}
	for _, te := range est.Tables {
		estimate[te.Table] = te.Bytes
	}
	du, canDisk := st.(DiskUser)
	m := Measurement{Records: n, DiskReported: canDisk, Tables: []TableMeasure{}}
	ts := time.Now().UnixMilli() // recent, so no family TTL expires the cells
	for _, e := range p.Entities {
		tables := measurable(p, e.Name)
		if len(tables) == 0 {
			continue
		}
		results, err := writeEntity(ctx, st, p, e, tables, n, ts)
		if err != nil {
			return m, err
		}
		for i, t := range tables {
			tm := results[i]
			tm.EstimatePerRecord = estimate[t.Name]
			tm.LogicalPerRecord = float64(tm.LogicalBytes) / float64(n)
			tm.DiskBytes = -1
			if canDisk {
				if err := st.MajorCompact(ctx, t.Name); err != nil {
					return m, fmt.Errorf("cost: measure: compact %s: %w", t.Name, err)
				}
				b, err := du.DiskUsage(ctx, t.Name)
				if err != nil {
					return m, fmt.Errorf("cost: measure: disk usage of %s: %w", t.Name, err)
				}
				tm.DiskBytes = b
				tm.DiskPerRecord = float64(b) / float64(n)
			}
			m.Tables = append(m.Tables, tm)
		}
	}
	return m, nil
}

// measurable lists an entity's tables other than counters, primary first.
func measurable(p *schema.Plan, entity string) []*schema.Table {
	var out []*schema.Table
	for _, t := range p.TablesOf(entity) {
		if t.Role != schema.RoleCounter {
			out = append(out, t)
		}
	}
	return out
}

func writeEntity(ctx context.Context, st store.Store, p *schema.Plan, e *schema.Entity, tables []*schema.Table, n int, ts int64) ([]TableMeasure, error) {
	out := make([]TableMeasure, len(tables))
	muts := make([]*store.BufferedMutator, len(tables))
	var mu sync.Mutex
	var failed error
	listener := func(_ store.RowMutation, err error) {
		mu.Lock()
		if failed == nil {
			failed = err
		}
		mu.Unlock()
	}
	for i, t := range tables {
		if err := st.CreateTable(ctx, t.Spec()); err != nil {
			return nil, fmt.Errorf("cost: measure: create table %s: %w", t.Name, err)
		}
		out[i] = TableMeasure{Table: t.Name, Entity: e.Name, Records: n}
		muts[i] = store.NewBufferedMutator(st, t.Name, store.BufferedOptions{Listener: listener})
	}
	closeAll := func() error {
		var errs []error
		for _, bm := range muts {
			errs = append(errs, bm.Close(ctx))
		}
		return errors.Join(errs...)
	}
	gen := newSynth(p, e, 1, ts)
	primary := p.Primary(e.Name)
	for i := range n {
		rec := gen.record(i)
		var pkey []byte
		if primary != nil {
			k, err := primary.Key.Encode(rec.values)
			if err != nil {
				_ = closeAll()
				return nil, fmt.Errorf("cost: measure: primary key of record %d: %w", i, err)
			}
			pkey = k
		}
		for j, t := range tables {
			rows, err := rowsFor(e, t, rec, pkey, ts)
			if err != nil {
				_ = closeAll()
				return nil, fmt.Errorf("cost: measure: table %s, record %d: %w", t.Name, i, err)
			}
			for _, rm := range rows {
				out[j].Rows++
				for _, mu := range rm.Mutations {
					out[j].Cells++
					out[j].LogicalBytes += int64(CellBytes(len(rm.Row), len(mu.Family), len(mu.Qualifier), len(mu.Value)))
				}
			}
			if err := muts[j].Mutate(ctx, rows...); err != nil {
				_ = closeAll()
				return nil, fmt.Errorf("cost: measure: write %s: %w", t.Name, err)
			}
		}
	}
	if err := closeAll(); err != nil {
		return nil, fmt.Errorf("cost: measure: flush: %w", err)
	}
	if failed != nil {
		return nil, fmt.Errorf("cost: measure: a write failed: %w", failed)
	}
	return out, nil
}

// rowChild is the child list a table has one row per element of: its each,
// or the child whose field its key uses (a lookup by items.sku).
func rowChild(e *schema.Entity, t *schema.Table) string {
	if t.Each != "" {
		return t.Each
	}
	for _, f := range t.Key.Fields() {
		if c, _, ok := strings.Cut(f, "."); ok && e.Child(c) != nil {
			return c
		}
	}
	return ""
}

// rowsFor lays one record out in one table, the way the estimate assumes.
func rowsFor(e *schema.Entity, t *schema.Table, rec record, pkey []byte, ts int64) ([]store.RowMutation, error) {
	child := rowChild(e, t)
	elems := []element{nil}
	if child != "" {
		elems = rec.children[child]
	}
	var out []store.RowMutation
	for _, el := range elems {
		vals := rowkey.Values{}
		for k, v := range rec.values {
			vals[k] = v
		}
		for k, v := range el {
			vals[child+"."+k] = v
		}
		if t.When != "" && !schema.Set(vals[t.When]) {
			continue
		}
		key, err := t.Key.Encode(vals)
		if err != nil {
			return nil, err
		}
		rm := store.RowMutation{Row: key}
		put := func(fam string, q, v []byte) {
			rm.Mutations = append(rm.Mutations, store.Mutation{Kind: store.Put, Family: fam, Qualifier: q, Timestamp: ts, Value: v})
		}
		for _, c := range t.Columns {
			if c.Template && c.Child != "" && c.Child != child {
				ch := e.Child(c.Child)
				kf := ch.Field(ch.Key)
				for _, x := range rec.children[c.Child] {
					q, err := rowkey.AppendValue([]byte(c.Prefix), kf.Type, x[ch.Key])
					if err != nil {
						return nil, err
					}
					q = append(q, c.Suffix...)
					v := encodeElement(ch, x)
					if c.Field != "" {
						_, name, _ := strings.Cut(c.Field, ".")
						v = encodeValue(x[name])
					}
					put(c.Family, q, v)
				}
				continue
			}
			if c.Field == "" {
				if ch := e.Child(c.Child); ch != nil && el != nil {
					put(c.Family, []byte(c.Qualifier), encodeElement(ch, el))
				}
				continue
			}
			put(c.Family, []byte(c.Qualifier), encodeValue(vals[c.Field]))
		}
		if t.Ref != nil {
			put(t.Ref.Family, []byte(t.Ref.Qualifier), pkey)
		}
		if len(rm.Mutations) == 0 {
			put(t.Families[0].Name, nil, nil)
		}
		out = append(out, rm)
	}
	return out, nil
}
