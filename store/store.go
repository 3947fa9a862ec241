package store

import "context"

// Store is HBase's data model. Implementations are safe for concurrent use.
//
// Reads of a table that does not exist return ErrTableNotFound; mutations
// naming a family the table lacks return ErrFamilyNotFound.
//
// A call keeps none of the slices it was given once it returns (row keys,
// qualifiers, values of mutations): the caller may overwrite them, as the
// writer does with its derive buffers from one batch to the next. A wrapper
// that records mutations copies what it keeps.
type Store interface {
	// CreateTable creates a table with its families and split keys.
	CreateTable(ctx context.Context, spec TableSpec) error
	// DescribeTable returns the spec a table was created with.
	DescribeTable(ctx context.Context, table string) (TableSpec, error)
	// ListTables returns table names in ascending order.
	ListTables(ctx context.Context) ([]string, error)
	// DropTable deletes a table and all its data.
	DropTable(ctx context.Context, table string) error
	// Regions lists the table's regions in key order with their request counts.
	Regions(ctx context.Context, table string) ([]Region, error)
	// MajorCompact purges delete markers and the cells they mask, versions
	// beyond each family's maximum, and cells past their TTL. It returns when
	// the compaction is done (backends that can only request one, as HBase,
	// return after the request).
	MajorCompact(ctx context.Context, table string) error

	// Get reads one row. A missing row is an empty Row, not an error.
	Get(ctx context.Context, table string, get Get) (Row, error)
	// Scan opens a scanner over a key range. The caller must Close it.
	Scan(ctx context.Context, table string, scan Scan) (Scanner, error)

	// Mutate applies one row's mutations atomically.
	Mutate(ctx context.Context, table string, m RowMutation) error
	// Batch applies many row mutations, each atomic on its own row, and
	// returns one error per mutation (nil where it succeeded). The returned
	// slice always has len(ms) entries. The error return is for failures of
	// the call as a whole (a missing table, a closed store).
	Batch(ctx context.Context, table string, ms []RowMutation) ([]error, error)
	// Increment adds to counter cells atomically and returns the new values
	// in the order of inc.Columns.
	Increment(ctx context.Context, table string, inc Increment) ([]int64, error)
	// CheckAndMutate applies m when cond holds on m.Row, atomically, and
	// reports whether it did.
	CheckAndMutate(ctx context.Context, table string, cond Condition, m RowMutation) (bool, error)

	// Close releases the store. Further calls return ErrClosed.
	Close() error
}

// Scanner yields rows in key order (descending for a reverse scan). With
// Scan.Batch set, one wide row may arrive as several consecutive Rows with
// the same key.
//
//	for sc.Next(ctx) { use(sc.Row()) }
//	if err := sc.Err(); err != nil { ... }
type Scanner interface {
	// Next advances to the next row and reports whether there is one.
	Next(ctx context.Context) bool
	// Row is the current row; valid until the next call to Next.
	Row() Row
	// Err is the error that stopped the scan, if any.
	Err() error
	// Close releases the scanner. It is safe to call more than once.
	Close() error
}

// Syncer is implemented by backends whose log is one ordered stream, so that
// a single sync makes every earlier write durable, in order. A writer may
// then send a batch's mutations with AsyncWAL and call Sync once before it
// acknowledges them: the same guarantee as SyncWAL on each, for one log
// sync instead of many. HBase syncs per call and does not implement it.
type Syncer interface {
	Sync(ctx context.Context) error
}

// Local reports whether a call to st is work in this process rather than a
// round trip to a server: a store whose one ordered log is local (Syncer),
// the embedded store. Callers send independent calls at once only to a
// store that is not local, where each call waits on the network; on a
// local one the goroutines cost more than they save (docs/BENCHMARKS.md).
func Local(st Store) bool {
	_, ok := st.(Syncer)
	return ok
}
