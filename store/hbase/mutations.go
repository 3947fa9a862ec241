package hbase

import (
	"fmt"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// A TDelete carries one delete type for all its columns, so a row mutation
// becomes one TPut with every put and one TDelete per delete kind present,
// applied together by mutateRow (atomic on the row: HBase runs a
// RowMutations as one batch under the row lock with one MVCC write).

// plan is a row mutation translated to Thrift.
type plan struct {
	put     *hbase2.TPut      // nil when the mutation has no puts
	deletes []*hbase2.TDelete // one per delete kind, in kind order
}

// single reports whether one put or one delete call carries the whole
// mutation, which saves mutateRow's extra work on the server.
func (p plan) single() bool {
	return (p.put != nil) != (len(p.deletes) > 0) && len(p.deletes) <= 1
}

func (p plan) rowMutations(row []byte) *hbase2.TRowMutations {
	rm := &hbase2.TRowMutations{Row: row}
	if p.put != nil {
		rm.Mutations = append(rm.Mutations, &hbase2.TMutation{Put: p.put})
	}
	for _, d := range p.deletes {
		rm.Mutations = append(rm.Mutations, &hbase2.TMutation{DeleteSingle: d})
	}
	return rm
}

func durability(d, fallback store.Durability) *hbase2.TDurability {
	if d == store.DurabilityDefault {
		d = fallback
	}
	var t hbase2.TDurability
	switch d {
	case store.SyncWAL:
		t = hbase2.TDurability_SYNC_WAL
	case store.AsyncWAL:
		t = hbase2.TDurability_ASYNC_WAL
	case store.SkipWAL:
		t = hbase2.TDurability_SKIP_WAL
	default:
		return nil // the table's setting
	}
	return &t
}

// nonNil keeps an empty qualifier or value distinct from an unset optional
// field: Thrift's Go code treats nil as unset, and HBase reads an unset
// qualifier as "the whole family" in a TColumn.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// planSlab hands out the Thrift structs of the plans of one call's
// mutations from arrays sized for all of them: a column value, a timestamp
// and a family's bytes per cell cost an allocation each otherwise. Nothing
// is written into a struct once handed out; the thrift encoder only reads
// them, and a retry sends the same plans again.
type planSlab struct {
	cvs  []hbase2.TColumnValue
	ptrs []*hbase2.TColumnValue
	ts   []int64
	// fam and famBytes: the last family converted, shared by the cells
	// that name it one after another (a row's cells come by family).
	fam      string
	famBytes []byte
	// durs holds the durabilities handed out, by store.Durability: a
	// batch's rows mostly ask for one, and share its pointer.
	durs [4]*hbase2.TDurability
}

// newPlanSlab sizes a slab for n mutations.
func newPlanSlab(n int) *planSlab {
	return &planSlab{cvs: make([]hbase2.TColumnValue, 0, n), ptrs: make([]*hbase2.TColumnValue, 0, n), ts: make([]int64, 0, n)}
}

// durability is durability(d, fallback), one pointer per value a slab.
func (s *planSlab) durability(d, fallback store.Durability) *hbase2.TDurability {
	if d == store.DurabilityDefault {
		d = fallback
	}
	if int(d) >= len(s.durs) {
		return durability(d, fallback)
	}
	if s.durs[d] == nil {
		s.durs[d] = durability(d, fallback)
	}
	return s.durs[d]
}

func (s *planSlab) family(f string) []byte {
	if f != s.fam || s.famBytes == nil {
		s.fam, s.famBytes = f, []byte(f)
	}
	return s.famBytes
}

// timestamp points at ts, kept in the slab; nil for LatestTimestamp, which
// the server stamps. When an append moves the slab's array, the pointers
// handed out before keep the old one alive, and it never changes.
func (s *planSlab) timestamp(ts int64) *int64 {
	if ts == store.LatestTimestamp {
		return nil
	}
	s.ts = append(s.ts, ts)
	return &s.ts[len(s.ts)-1]
}

// columnValues returns an empty list for a put's n column values, capped
// at n. columnValue keeps each value in the slab: when its array is full
// it starts another, and the values handed out stay where they are.
func (s *planSlab) columnValues(n int) []*hbase2.TColumnValue {
	if cap(s.ptrs)-len(s.ptrs) < n {
		s.ptrs = make([]*hbase2.TColumnValue, 0, max(n, 64))
	}
	start := len(s.ptrs)
	s.ptrs = s.ptrs[:start+n]
	return s.ptrs[start : start : start+n]
}

func (s *planSlab) columnValue(cv hbase2.TColumnValue) *hbase2.TColumnValue {
	if len(s.cvs) == cap(s.cvs) {
		s.cvs = make([]hbase2.TColumnValue, 0, 64)
	}
	s.cvs = append(s.cvs, cv)
	return &s.cvs[len(s.cvs)-1]
}

// planMutation translates m. fallback is the store's durability for
// mutations that ask for the default. A nil slab makes one for m.
func planMutation(m store.RowMutation, fallback store.Durability, slab *planSlab) (plan, error) {
	if slab == nil {
		slab = newPlanSlab(len(m.Mutations))
	}
	var p plan
	dur := slab.durability(m.Durability, fallback)
	// When every put of the row has one timestamp (a writer's event
	// version), the TPut carries it once and its column values none: the
	// gateway stamps each cell with the put's timestamp, and eleven bytes
	// a cell less are encoded, sent and decoded.
	puts, same := 0, true
	var putTS int64
	for _, x := range m.Mutations {
		if x.Kind == store.Put {
			if puts == 0 {
				putTS = x.Timestamp
			} else if x.Timestamp != putTS {
				same = false
			}
			puts++
		}
	}
	same = same && puts > 1 && putTS != store.LatestTimestamp
	// Indexed by TDeleteType; DeleteRow has its own slot at the end.
	var dels [4]*hbase2.TDelete
	var rowDelete *hbase2.TDelete
	for i, x := range m.Mutations {
		switch x.Kind {
		case store.Put:
			if x.Family == "" {
				return p, fmt.Errorf("mutation %d (put) of row %s names no family", i, store.Printable(m.Row))
			}
			if p.put == nil {
				p.put = &hbase2.TPut{Row: m.Row, Durability: dur, ColumnValues: slab.columnValues(puts)}
				if same {
					p.put.Timestamp = slab.timestamp(putTS)
				}
			}
			cv := hbase2.TColumnValue{Family: slab.family(x.Family), Qualifier: nonNil(x.Qualifier), Value: nonNil(x.Value)}
			if !same {
				cv.Timestamp = slab.timestamp(x.Timestamp)
			}
			p.put.ColumnValues = append(p.put.ColumnValues, slab.columnValue(cv))
		case store.DeleteVersion, store.DeleteColumn, store.DeleteFamily:
			if x.Family == "" {
				return p, fmt.Errorf("mutation %d (%s) of row %s names no family", i, x.Kind, store.Printable(m.Row))
			}
			t := deleteType(x.Kind)
			if dels[t] == nil {
				dels[t] = &hbase2.TDelete{Row: m.Row, DeleteType: t, Durability: dur}
			}
			c := &hbase2.TColumn{Family: slab.family(x.Family), Timestamp: slab.timestamp(x.Timestamp)}
			if x.Kind != store.DeleteFamily {
				c.Qualifier = nonNil(x.Qualifier)
			}
			dels[t].Columns = append(dels[t].Columns, c)
		case store.DeleteRow:
			// A TDelete without columns deletes every family at or below
			// its timestamp. Two row deletes keep the newer one, which
			// covers the other.
			if rowDelete == nil || x.Timestamp > rowDelete.GetTimestamp() || x.Timestamp == store.LatestTimestamp {
				// DeleteType only applies to listed columns; it is set to
				// the IDL's default so that it is not sent at all.
				rowDelete = &hbase2.TDelete{Row: m.Row, Timestamp: slab.timestamp(x.Timestamp), DeleteType: hbase2.TDelete_DeleteType_DEFAULT, Durability: dur}
			}
		default:
			return p, fmt.Errorf("mutation %d of row %s has unknown kind %s", i, store.Printable(m.Row), x.Kind)
		}
	}
	for _, d := range dels {
		if d != nil {
			p.deletes = append(p.deletes, d)
		}
	}
	if rowDelete != nil {
		p.deletes = append(p.deletes, rowDelete)
	}
	return p, nil
}

func deleteType(k store.Kind) hbase2.TDeleteType {
	switch k {
	case store.DeleteVersion:
		return hbase2.TDeleteType_DELETE_COLUMN
	case store.DeleteColumn:
		return hbase2.TDeleteType_DELETE_COLUMNS
	default:
		return hbase2.TDeleteType_DELETE_FAMILY
	}
}
