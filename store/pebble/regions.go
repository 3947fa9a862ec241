package pebble

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/denorm/denorm/store"
)

// regionSet is a table's regions with their request counters. Counters live
// in memory only: like HBase's, they count since the region opened.
type regionSet struct {
	table  string
	starts [][]byte // starts[0] is empty
	ids    []string
	reads  []atomic.Int64
	writes []atomic.Int64
}

func newRegionSet(table string, splits [][]byte) *regionSet {
	r := &regionSet{table: table}
	r.starts = append([][]byte{{}}, splits...)
	for _, st := range r.starts {
		sum := md5.Sum(append([]byte(table+","), st...))
		r.ids = append(r.ids, hex.EncodeToString(sum[:]))
	}
	r.reads = make([]atomic.Int64, len(r.starts))
	r.writes = make([]atomic.Int64, len(r.starts))
	return r
}

// index returns the region holding row.
func (r *regionSet) index(row []byte) int {
	if len(r.starts) == 1 {
		return 0
	}
	// The first start greater than row, minus one.
	return sort.Search(len(r.starts), func(i int) bool { return bytes.Compare(r.starts[i], row) > 0 }) - 1
}

func (r *regionSet) read(row []byte)  { r.reads[r.index(row)].Add(1) }
func (r *regionSet) write(row []byte) { r.writes[r.index(row)].Add(1) }

// Regions lists the table's regions in key order.
func (s *Store) Regions(ctx context.Context, name string) ([]store.Region, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	t, err := s.table(name)
	if err != nil {
		return nil, fmt.Errorf("regions: %w", err)
	}
	r := t.regions
	out := make([]store.Region, len(r.starts))
	for i := range r.starts {
		var end []byte
		if i+1 < len(r.starts) {
			end = append([]byte{}, r.starts[i+1]...)
		}
		out[i] = store.Region{
			Table:         name,
			ID:            r.ids[i],
			Start:         append([]byte{}, r.starts[i]...),
			End:           end,
			Server:        "embedded",
			ReadRequests:  r.reads[i].Load(),
			WriteRequests: r.writes[i].Load(),
		}
	}
	return out, nil
}
