package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// tableMeta is what the metadata key space holds for one table.
type tableMeta struct {
	ID   uint64          `json:"id"`
	Spec store.TableSpec `json:"spec"`
}

// table is the in-memory view of one table.
type table struct {
	id   uint64
	spec store.TableSpec
	// fams maps a family name to its spec; its keys double as interned
	// family strings so reads do not allocate one per cell.
	fams    map[string]*famInfo
	regions *regionSet
	// compactMu is held shared by writers and exclusively by MajorCompact, so
	// that no put can slip under a marker that the compaction is purging.
	compactMu sync.RWMutex
}

type famInfo struct {
	name     string
	versions int
	ttlMs    int64 // 0: forever
	// minVersions is how many newest versions of a column the TTL leaves.
	minVersions int
}

func newTable(m tableMeta) *table {
	t := &table{id: m.ID, spec: m.Spec, fams: map[string]*famInfo{}}
	for _, f := range m.Spec.Families {
		t.fams[f.Name] = &famInfo{name: f.Name, versions: f.Versions(), ttlMs: f.TTL.Milliseconds(), minVersions: f.MinVersions}
	}
	t.regions = newRegionSet(m.Spec.Name, m.Spec.SplitKeys)
	return t
}

func (s *Store) loadTables() error {
	it, err := s.db.NewIter(&pdb.IterOptions{LowerBound: []byte{spaceMeta}, UpperBound: []byte{spaceMeta + 1}})
	if err != nil {
		return fmt.Errorf("pebble store: list tables: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("pebble store: read metadata of table %q: %w", it.Key()[1:], err)
		}
		var m tableMeta
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("pebble store: decode metadata of table %q: %w", it.Key()[1:], err)
		}
		s.tables[m.Spec.Name] = newTable(m)
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("pebble store: list tables: %w", err)
	}
	return nil
}

func (s *Store) table(name string) (*table, error) {
	s.tablesMu.RLock()
	t := s.tables[name]
	s.tablesMu.RUnlock()
	if t == nil {
		return nil, fmt.Errorf("table %q: %w", name, store.ErrTableNotFound)
	}
	return t, nil
}

func validateSpec(spec store.TableSpec) error {
	if err := store.CheckTableName(spec.Name); err != nil {
		return err
	}
	if len(spec.Families) == 0 {
		return fmt.Errorf("table %q has no column families", spec.Name)
	}
	seen := map[string]bool{}
	for _, f := range spec.Families {
		if f.Name == "" {
			return fmt.Errorf("table %q: a column family has an empty name", spec.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("table %q: column family %q listed twice", spec.Name, f.Name)
		}
		seen[f.Name] = true
		if f.TTL < 0 || f.MaxVersions < 0 {
			return fmt.Errorf("table %q family %q: negative TTL or max versions", spec.Name, f.Name)
		}
		if f.MinVersions < 0 || f.MinVersions > f.Versions() {
			return fmt.Errorf("table %q family %q: min versions %d: want 0 to the family's %d versions", spec.Name, f.Name, f.MinVersions, f.Versions())
		}
		if k := strings.ToUpper(f.KeepDeletedCells); k != "" && k != "FALSE" {
			// Keeping deleted cells readable by time-range reads is a read
			// rule this store does not have; saying so beats ignoring it.
			return fmt.Errorf("table %q family %q: keep deleted cells %s: %w", spec.Name, f.Name, k, store.ErrUnsupported)
		}
	}
	for i, k := range spec.SplitKeys {
		if len(k) == 0 {
			return fmt.Errorf("table %q: split key %d is empty", spec.Name, i)
		}
		if i > 0 && bytes.Compare(spec.SplitKeys[i-1], k) >= 0 {
			return fmt.Errorf("table %q: split keys are not sorted and distinct at %d", spec.Name, i)
		}
	}
	return nil
}

// CreateTable records the spec under a fresh table id.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validateSpec(spec); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	s.tablesMu.RLock()
	_, exists := s.tables[spec.Name]
	s.tablesMu.RUnlock()
	if exists {
		return fmt.Errorf("create table %q: %w", spec.Name, store.ErrTableExists)
	}
	id, err := s.nextTableID()
	if err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	m := tableMeta{ID: id, Spec: spec}
	js, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("create table %q: encode metadata: %w", spec.Name, err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Set(seqKey, binary.BigEndian.AppendUint64(nil, id+1), nil)
	_ = b.Set(metaKey(spec.Name), js, nil)
	if err := b.Commit(s.ddlWriteOptions()); err != nil {
		return fmt.Errorf("create table %q: %w", spec.Name, err)
	}
	s.tablesMu.Lock()
	s.tables[spec.Name] = newTable(m)
	s.tablesMu.Unlock()
	return nil
}

// nextTableID reads the id counter. Ids are never reused, so a dropped
// table's cells, should any be written by a racing mutation, are never seen.
func (s *Store) nextTableID() (uint64, error) {
	v, closer, err := s.db.Get(seqKey)
	if errors.Is(err, pdb.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read table id counter: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("table id counter is %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// DescribeTable returns the spec the table was created with.
func (s *Store) DescribeTable(ctx context.Context, name string) (store.TableSpec, error) {
	if err := s.enter(); err != nil {
		return store.TableSpec{}, err
	}
	defer s.leave()
	t, err := s.table(name)
	if err != nil {
		return store.TableSpec{}, fmt.Errorf("describe: %w", err)
	}
	// A deep copy through JSON keeps callers from editing our view.
	js, _ := json.Marshal(t.spec)
	var out store.TableSpec
	if err := json.Unmarshal(js, &out); err != nil {
		return store.TableSpec{}, fmt.Errorf("describe table %q: %w", name, err)
	}
	return out, nil
}

// ListTables returns table names in ascending order.
func (s *Store) ListTables(ctx context.Context) ([]string, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	s.tablesMu.RLock()
	out := make([]string, 0, len(s.tables))
	for n := range s.tables {
		out = append(out, n)
	}
	s.tablesMu.RUnlock()
	sort.Strings(out)
	return out, nil
}

// DropTable deletes the metadata and, with one range deletion, every cell.
func (s *Store) DropTable(ctx context.Context, name string) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	t, err := s.table(name)
	if err != nil {
		return fmt.Errorf("drop: %w", err)
	}
	lo, hi := tableBounds(t.id)
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(lo, hi, nil)
	_ = b.Delete(metaKey(name), nil)
	if err := b.Commit(s.ddlWriteOptions()); err != nil {
		return fmt.Errorf("drop table %q: %w", name, err)
	}
	s.tablesMu.Lock()
	delete(s.tables, name)
	s.tablesMu.Unlock()
	return nil
}

// ddlWriteOptions syncs table creation and drops unless the store was
// opened with a weaker default durability, which the caller chose knowing a
// crash may lose the last writes (test fixtures that create tables by the
// thousand do).
func (s *Store) ddlWriteOptions() *pdb.WriteOptions {
	if s.syncFor(store.DurabilityDefault) {
		return pdb.Sync
	}
	return pdb.NoSync
}
