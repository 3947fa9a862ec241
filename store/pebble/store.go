// Package pebble is the embedded, persistent backend of store.Store, on
// github.com/cockroachdb/pebble. It keeps HBase's semantics exactly (see
// package store): cells are stored in HBase's KeyValue order (key.go) and
// reads apply delete markers, versions and TTLs as HBase's scanners do.
//
// URLs: pebble:///abs/dir or pebble://./rel/dir, with the query parameters
// max_cell_size, max_row_size, durability (sync_wal, async_wal, skip_wal)
// and cache_size (Options.CacheSize, in bytes).
//
// Pebble has no per-batch way to skip its write-ahead log, so skip_wal
// behaves as async_wal here: a mutation never gets less durability than it
// asked for.
//
// Every sstable carries a bloom filter of the rows it holds, as an HBase
// family with BLOOMFILTER => ROW does (comparer.go); a store created before
// the filters opens and works without them.
package pebble

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// Options configure Open. The zero value is usable.
type Options struct {
	// MaxCellSize refuses cells whose KeyValue size (20 bytes plus row,
	// family, qualifier and value) is larger. 0 means store.DefaultMaxCellSize.
	MaxCellSize int
	// MaxRowSize fails reads of a row whose stored bytes exceed it.
	// 0 means store.DefaultMaxRowSize.
	MaxRowSize int
	// Durability applies to mutations that ask for DurabilityDefault.
	// DurabilityDefault here means SyncWAL.
	Durability store.Durability
	// Clock returns the time in milliseconds since the epoch; it stamps
	// LatestTimestamp cells and measures TTLs. nil means the system clock.
	Clock func() int64
	// CacheSize is Pebble's block cache in bytes. Pebble charges its
	// memtables to the cache, so blocks get what the memtables leave. 0
	// means room for two memtables (the one written and one being flushed)
	// plus DefaultBlockCacheSize.
	CacheSize int64
	// MemTableSize is Pebble's memtable size; 0 means DefaultMemTableSize.
	// Pebble's own default (4 MiB) turns every batch over half of it, as a
	// 2 MiB buffered-mutator flush is, into a flushable batch that is sorted
	// and flushed on its own: several times slower.
	MemTableSize uint64
}

// DefaultMemTableSize is the memtable size the store opens Pebble with.
const DefaultMemTableSize = 64 << 20

// DefaultBlockCacheSize is the room for blocks in the default cache, beyond
// the memtables. Pebble's own default cache (8 MiB) is smaller than one
// memtable, and a cache the memtables fill holds no blocks at all: every
// read would decompress the blocks it needs again.
const DefaultBlockCacheSize = 64 << 20

// Store is the embedded store. It is safe for concurrent use.
type Store struct {
	db   *pdb.DB
	opts Options
	now  func() int64
	// filters tells that the database was made with rowComparer, so its
	// sstables carry bloom filters of row prefixes (comparer.go).
	filters bool

	// life guards closing: every call holds it shared, Close exclusively.
	life   sync.RWMutex
	closed atomic.Bool

	tablesMu sync.RWMutex
	tables   map[string]*table
	ddlMu    sync.Mutex // serialises create and drop

	locks rowLocks

	scannersMu sync.Mutex
	scanners   map[*scanner]struct{}
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.MaxCellSize <= 0 {
		opts.MaxCellSize = store.DefaultMaxCellSize
	}
	if opts.MaxRowSize <= 0 {
		opts.MaxRowSize = store.DefaultMaxRowSize
	}
	if opts.Durability == store.DurabilityDefault {
		opts.Durability = store.SyncWAL
	}
	now := opts.Clock
	if now == nil {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	if opts.MemTableSize == 0 {
		opts.MemTableSize = DefaultMemTableSize
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = 2*int64(opts.MemTableSize) + DefaultBlockCacheSize
	}
	c := pdb.NewCache(opts.CacheSize)
	defer c.Unref()
	cmp, filters, err := comparerFor(dir)
	if err != nil {
		return nil, err
	}
	po := &pdb.Options{Logger: quietLogger{pdb.DefaultLogger}, MemTableSize: opts.MemTableSize, Cache: c, Comparer: cmp}
	if filters {
		applyFilters(po)
	}
	// Pebble's default runs one compaction at a time whatever the debt. A
	// bulk apply with wide fan-out (a rename refreshing every order that
	// holds the product) writes faster than one compaction drains L0, and
	// reads then pay for every L0 file. Up to one compaction per core is
	// allowed once Pebble sees L0 read amplification or compaction debt
	// build up; normally it stays at one.
	po.CompactionConcurrencyRange = func() (int, int) { return 1, max(2, runtime.GOMAXPROCS(0)) }
	db, err := pdb.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("pebble store: open %s: %w", dir, inUse(dir, err))
	}
	s := &Store{db: db, opts: opts, now: now, filters: filters, tables: map[string]*table{}, scanners: map[*scanner]struct{}{}}
	if err := s.loadTables(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// enter marks the start of a call; the caller must call leave when done.
func (s *Store) enter() error {
	s.life.RLock()
	if s.closed.Load() {
		s.life.RUnlock()
		return store.ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.life.RUnlock() }

// begin opens one call on a table: it fails when the store is closed, the
// context is done or the table does not exist (the error then names op).
// On success the caller must call leave when done; on failure it must not.
func (s *Store) begin(ctx context.Context, op, name string) (*table, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		s.leave()
		return nil, err
	}
	t, err := s.table(name)
	if err != nil {
		s.leave()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return t, nil
}

// Close closes open scanners and the database. Later calls return
// store.ErrClosed.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	s.scannersMu.Lock()
	for sc := range s.scanners {
		sc.release(store.ErrClosed)
	}
	s.scanners = nil
	s.scannersMu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("pebble store: close: %w", err)
	}
	return nil
}

// writeOptions maps a durability to Pebble's only knob, whether to sync.
func (s *Store) syncFor(d store.Durability) bool {
	if d == store.DurabilityDefault {
		d = s.opts.Durability
	}
	return d == store.SyncWAL
}
