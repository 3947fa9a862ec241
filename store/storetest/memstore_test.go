package storetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// memStore is a throwaway Store built on the suite's model, so that the
// suite can be run (and so tested) without any real backend. It is a test
// double for the suite itself, never a backend: one lock, no persistence.
type memStore struct {
	mu      sync.Mutex
	tables  map[string]*memTable
	closed  bool
	maxCell int
	maxRow  int
}

type memTable struct {
	spec   store.TableSpec
	m      *model
	reads  []int64
	writes []int64
}

func newMemStore(maxCell, maxRow int) *memStore {
	return &memStore{tables: map[string]*memTable{}, maxCell: maxCell, maxRow: maxRow}
}

func (s *memStore) table(name string) (*memTable, error) {
	if s.closed {
		return nil, store.ErrClosed
	}
	t, ok := s.tables[name]
	if !ok {
		return nil, fmt.Errorf("memstore: table %s: %w", name, store.ErrTableNotFound)
	}
	return t, nil
}

func (t *memTable) region(row []byte) int {
	i := 0
	for i < len(t.spec.SplitKeys) && bytes.Compare(row, t.spec.SplitKeys[i]) >= 0 {
		i++
	}
	return i
}

func (s *memStore) CreateTable(_ context.Context, spec store.TableSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	if _, ok := s.tables[spec.Name]; ok {
		return fmt.Errorf("memstore: create %s: %w", spec.Name, store.ErrTableExists)
	}
	spec.Families = slices.Clone(spec.Families)
	spec.SplitKeys = slices.Clone(spec.SplitKeys)
	n := len(spec.SplitKeys) + 1
	s.tables[spec.Name] = &memTable{spec: spec, m: newModel(spec), reads: make([]int64, n), writes: make([]int64, n)}
	return nil
}

func (s *memStore) DescribeTable(_ context.Context, name string) (store.TableSpec, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return store.TableSpec{}, err
	}
	return t.spec, nil
}

func (s *memStore) ListTables(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, store.ErrClosed
	}
	var out []string
	for n := range s.tables {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

func (s *memStore) DropTable(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.table(name); err != nil {
		return err
	}
	delete(s.tables, name)
	return nil
}

func (s *memStore) Regions(_ context.Context, name string) ([]store.Region, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return nil, err
	}
	bounds := append([][]byte{nil}, t.spec.SplitKeys...)
	bounds = append(bounds, nil)
	var out []store.Region
	for i := range len(bounds) - 1 {
		out = append(out, store.Region{Table: name, ID: fmt.Sprintf("%s,%d", name, i), Start: bounds[i], End: bounds[i+1],
			ReadRequests: t.reads[i], WriteRequests: t.writes[i]})
	}
	return out, nil
}

func (s *memStore) MajorCompact(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return err
	}
	t.m.majorCompact(nowMillis())
	return nil
}

func (t *memTable) checkColumns(cols []store.Column) error {
	for _, c := range cols {
		if _, ok := t.spec.Family(c.Family); !ok {
			return fmt.Errorf("memstore: %w: %s", store.ErrFamilyNotFound, c.Family)
		}
	}
	return nil
}

func (s *memStore) readRow(t *memTable, row []byte, cols []store.Column, versions int, tr store.TimeRange) ([]store.Cell, error) {
	cs := t.m.read(row, cols, versions, tr, nowMillis())
	perFamily := map[string]int{}
	for _, c := range cs {
		perFamily[c.Family] += 20 + len(c.Row) + len(c.Family) + len(c.Qualifier) + len(c.Value)
		if perFamily[c.Family] > s.maxRow {
			return nil, &store.RowTooBigError{Table: t.spec.Name, Row: row, Limit: s.maxRow}
		}
	}
	return cs, nil
}

func (s *memStore) Get(_ context.Context, name string, g store.Get) (store.Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return store.Row{}, err
	}
	if err := t.checkColumns(g.Columns); err != nil {
		return store.Row{}, err
	}
	t.reads[t.region(g.Row)]++
	cs, err := s.readRow(t, g.Row, g.Columns, g.MaxVersions, g.TimeRange)
	if err != nil {
		return store.Row{}, err
	}
	return store.Row{Key: bytes.Clone(g.Row), Cells: cs}, nil
}

type sliceScanner struct {
	rows []store.Row
	err  error
	cur  store.Row
	done bool
}

func (sc *sliceScanner) Next(context.Context) bool {
	if sc.done || len(sc.rows) == 0 {
		sc.done = true
		return false
	}
	sc.cur, sc.rows = sc.rows[0], sc.rows[1:]
	return true
}
func (sc *sliceScanner) Row() store.Row { return sc.cur }
func (sc *sliceScanner) Err() error     { return sc.err }
func (sc *sliceScanner) Close() error   { sc.done = true; return nil }

func (s *memStore) Scan(_ context.Context, name string, sc store.Scan) (store.Scanner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return nil, err
	}
	if err := t.checkColumns(sc.Columns); err != nil {
		return nil, err
	}
	keys := t.m.rowKeys()
	if sc.Reverse {
		slices.Reverse(keys)
	}
	out := &sliceScanner{}
	n := 0
	for _, k := range keys {
		if !inScan(sc, k) {
			continue
		}
		cs, err := s.readRow(t, k, sc.Columns, sc.MaxVersions, sc.TimeRange)
		if err != nil {
			out.err = err
			break
		}
		if len(cs) == 0 {
			continue
		}
		t.reads[t.region(k)]++
		for len(cs) > 0 {
			piece := cs
			if sc.Batch > 0 && len(piece) > sc.Batch {
				piece = cs[:sc.Batch]
			}
			cs = cs[len(piece):]
			out.rows = append(out.rows, store.Row{Key: bytes.Clone(k), Cells: piece})
		}
		if n++; sc.Limit > 0 && n == sc.Limit {
			break
		}
	}
	return out, nil
}

// resolve checks a mutation and stamps LatestTimestamp.
func (s *memStore) resolve(t *memTable, m store.RowMutation) (store.RowMutation, error) {
	now := nowMillis()
	out := store.RowMutation{Row: bytes.Clone(m.Row), Durability: m.Durability}
	if len(m.Row) == 0 || len(m.Row) > maxRowKey {
		return out, fmt.Errorf("memstore: row key of %d bytes", len(m.Row))
	}
	for _, x := range m.Mutations {
		if x.Timestamp < 0 {
			return out, fmt.Errorf("memstore: negative timestamp %d", x.Timestamp)
		}
		if x.Kind == store.DeleteVersion && x.Timestamp == store.LatestTimestamp {
			// As HBase: the newest visible version, or now when there is none.
			x.Timestamp = now
			if cur := t.m.read(m.Row, []store.Column{{Family: x.Family, Qualifier: x.Qualifier}}, 1, store.TimeRange{}, now); len(cur) > 0 {
				x.Timestamp = cur[0].Timestamp
			}
		}
		if x.Kind != store.DeleteRow {
			if _, ok := t.spec.Family(x.Family); !ok {
				return out, fmt.Errorf("memstore: row %s: %w: %s", store.Printable(m.Row), store.ErrFamilyNotFound, x.Family)
			}
		}
		if size := 20 + len(m.Row) + len(x.Family) + len(x.Qualifier) + len(x.Value); size > s.maxCell {
			return out, &store.CellTooBigError{Table: t.spec.Name, Row: m.Row, Family: x.Family, Qualifier: x.Qualifier, Size: size, Limit: s.maxCell}
		}
		if x.Timestamp == store.LatestTimestamp {
			x.Timestamp = now
		}
		out.Mutations = append(out.Mutations, x)
	}
	return out, nil
}

func (s *memStore) mutateLocked(t *memTable, m store.RowMutation) error {
	r, err := s.resolve(t, m)
	if err != nil {
		return err
	}
	t.writes[t.region(m.Row)]++
	return t.m.apply(r)
}

func (s *memStore) Mutate(_ context.Context, name string, m store.RowMutation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return err
	}
	return s.mutateLocked(t, m)
}

func (s *memStore) Batch(_ context.Context, name string, ms []store.RowMutation) ([]error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = s.mutateLocked(t, m)
	}
	return errs, nil
}

func (s *memStore) Increment(_ context.Context, name string, inc store.Increment) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return nil, err
	}
	now := nowMillis()
	m := store.RowMutation{Row: inc.Row}
	var out []int64
	for _, c := range inc.Columns {
		if _, ok := t.spec.Family(c.Family); !ok {
			return nil, fmt.Errorf("memstore: increment: %w: %s", store.ErrFamilyNotFound, c.Family)
		}
		cur := t.m.read(inc.Row, []store.Column{{Family: c.Family, Qualifier: c.Qualifier}}, 1, store.TimeRange{}, now)
		var v int64
		ts := now
		if len(cur) > 0 {
			if len(cur[0].Value) != 8 {
				return nil, fmt.Errorf("memstore: increment %s:%s: value is %d bytes, not 8", c.Family, c.Qualifier, len(cur[0].Value))
			}
			v = int64(binary.BigEndian.Uint64(cur[0].Value))
			ts = max(now, cur[0].Timestamp+1)
		}
		v += c.Delta
		out = append(out, v)
		m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Timestamp: ts, Value: be64(v)})
	}
	return out, s.mutateLocked(t, m)
}

func (s *memStore) CheckAndMutate(_ context.Context, name string, cond store.Condition, m store.RowMutation) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return false, err
	}
	cur := t.m.read(m.Row, []store.Column{{Family: cond.Family, Qualifier: cond.Qualifier}}, 1, store.TimeRange{}, nowMillis())
	ok := len(cur) == 0
	if !cond.Absent {
		ok = len(cur) == 1 && bytes.Equal(cur[0].Value, cond.Value)
	}
	if !ok {
		return false, nil
	}
	return true, s.mutateLocked(t, m)
}

func (s *memStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// TestSuiteOnModelStore runs the whole suite against the model-backed
// store: hand-written expectations in the suite check the model, and the
// model checks the randomized test's plumbing.
func TestSuiteOnModelStore(t *testing.T) {
	// One store for the whole run, as on a shared HBase, except when a
	// subtest asks for a second store of its own.
	shared := newMemStore(64<<10, 256<<10)
	var mu sync.Mutex
	handedOut := map[string]bool{}
	start := time.Now()
	Run(t, Harness{
		New: func(t *testing.T) store.Store {
			mu.Lock()
			defer mu.Unlock()
			if handedOut[t.Name()] {
				return newMemStore(64<<10, 256<<10)
			}
			handedOut[t.Name()] = true
			return shared
		},
		MaxCellSize:  64 << 10,
		MaxRowSize:   256 << 10,
		RegionCounts: true,
		NoSettings:   true,
	})
	t.Logf("suite took %v", time.Since(start))
	if list, _ := shared.ListTables(context.Background()); len(list) != 0 {
		t.Errorf("the suite left tables behind: %q", list)
	}
}
