package pebble

import (
	"context"
	"errors"
	"fmt"
	"math"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// Mutate applies one row's mutations in one Pebble batch.
func (s *Store) Mutate(ctx context.Context, name string, m store.RowMutation) error {
	errs, err := s.Batch(ctx, name, []store.RowMutation{m})
	if err != nil {
		return err
	}
	return errs[0]
}

// Batch validates each row mutation on its own and commits every valid one
// in a single Pebble batch, synced if any of them asks for SyncWAL.
func (s *Store) Batch(ctx context.Context, name string, ms []store.RowMutation) ([]error, error) {
	t, err := s.begin(ctx, "batch", name)
	if err != nil {
		return nil, err
	}
	defer s.leave()
	errs := make([]error, len(ms))
	if len(ms) == 0 {
		return errs, nil
	}
	w := s.newWriter(t)
	defer w.close()
	for i := range ms {
		errs[i] = w.validate(&ms[i])
	}
	rows := make([][]byte, 0, len(ms))
	shared := true // no mutation reads its row
	size := 0
	for i := range ms {
		if errs[i] == nil {
			rows = append(rows, ms[i].Row)
			shared = shared && !readsRow(&ms[i])
			size += batchBytes(&ms[i])
		}
	}
	w.reserve(size)
	t.compactMu.RLock()
	defer t.compactMu.RUnlock()
	held := s.locks.lock(t.id, rows, nil, shared)
	defer s.locks.unlock(held, shared)

	sync, any := false, false
	for i := range ms {
		if errs[i] != nil {
			continue
		}
		if errs[i] = w.add(&ms[i]); errs[i] == nil {
			any = true
			sync = sync || s.syncFor(ms[i].Durability)
		}
	}
	if !any {
		return errs, nil
	}
	if err := w.commit(sync); err != nil {
		for i := range ms {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs, nil
	}
	for i := range ms {
		if errs[i] == nil {
			t.regions.write(ms[i].Row)
		}
	}
	return errs, nil
}

// readsRow reports whether applying m reads its row first: a delete of the
// newest version finds that version's timestamp (writer.add).
func readsRow(m *store.RowMutation) bool {
	for _, x := range m.Mutations {
		if x.Kind == store.DeleteVersion && x.Timestamp == store.LatestTimestamp {
			return true
		}
	}
	return false
}

// writer builds one Pebble batch for a table. Callers hold the row locks of
// every row they add.
type writer struct {
	s   *Store
	t   *table
	b   *pdb.Batch
	now int64
	key []byte
	// prefix is the escaped row prefix of the row add is writing.
	prefix []byte
}

// newWriter starts a writer; its batch is made by reserve, or by the first
// add.
func (s *Store) newWriter(t *table) *writer {
	return &writer{s: s, t: t, now: s.now()}
}

func (w *writer) close() {
	if w.b != nil {
		_ = w.b.Close()
	}
}

// reserve makes the batch with room for about n bytes. Grown from its
// first kilobyte by doubling, a batch of a thousand rows allocated and
// copied its buffer a dozen times over. Called before the first add.
func (w *writer) reserve(n int) {
	w.b = w.s.db.NewBatch(pdb.WithInitialSizeBytes(min(n, batchReserveMax)))
}

// batchReserveMax caps reserve: a larger batch grows as it must.
const batchReserveMax = 64 << 20

// batchBytes is about what m takes in a Pebble batch: its Size, plus per
// cell the escaped row prefix its key repeats and the batch's framing. An
// estimate: a row delete writes a marker per family, and a row whose key
// holds zero bytes escapes longer; the batch grows past it as it must.
func batchBytes(m *store.RowMutation) int {
	return m.Size() + len(m.Mutations)*(len(m.Row)+len(m.Row)/16+22)
}

func (w *writer) commit(sync bool) error {
	opt := pdb.NoSync
	if sync {
		opt = pdb.Sync
	}
	if err := w.b.Commit(opt); err != nil {
		return fmt.Errorf("commit to table %q: %w", w.t.spec.Name, err)
	}
	return nil
}

// validate checks a row mutation without touching the batch.
func (w *writer) validate(m *store.RowMutation) error {
	tn := w.t.spec.Name
	if len(m.Row) == 0 || len(m.Row) > store.MaxRowKeySize {
		return &store.RowKeyError{Table: tn, Size: len(m.Row)}
	}
	if len(m.Mutations) == 0 {
		return fmt.Errorf("table %q row %s: no mutations", tn, store.Printable(m.Row))
	}
	for _, x := range m.Mutations {
		if x.Timestamp < 0 {
			return fmt.Errorf("table %q row %s: negative timestamp %d", tn, store.Printable(m.Row), x.Timestamp)
		}
		switch x.Kind {
		case store.DeleteRow:
			continue
		case store.Put, store.DeleteVersion, store.DeleteColumn, store.DeleteFamily:
		default:
			return fmt.Errorf("table %q row %s: unknown mutation kind %v", tn, store.Printable(m.Row), x.Kind)
		}
		if _, ok := w.t.fams[x.Family]; !ok {
			return fmt.Errorf("table %q row %s family %q: %w", tn, store.Printable(m.Row), x.Family, store.ErrFamilyNotFound)
		}
		if x.Kind != store.Put {
			continue
		}
		size := store.CellSize(m.Row, x.Family, x.Qualifier, x.Value)
		if size > w.s.opts.MaxCellSize {
			return &store.CellTooBigError{Table: tn, Row: m.Row, Family: x.Family, Qualifier: x.Qualifier, Size: size, Limit: w.s.opts.MaxCellSize}
		}
	}
	return nil
}

// add appends a validated row mutation to the batch.
func (w *writer) add(m *store.RowMutation) error {
	if w.b == nil {
		w.b = w.s.db.NewBatch()
	}
	// Every cell key of the row starts with the same escaped row prefix:
	// escaped once here, copied for each cell by set.
	w.prefix = appendRowPrefix(w.prefix[:0], w.t.id, m.Row)
	for _, x := range m.Mutations {
		ts := x.Timestamp
		if ts == store.LatestTimestamp {
			ts = w.now
		}
		switch x.Kind {
		case store.Put:
			w.set(x.Family, x.Qualifier, ts, typePut, x.Value)
		case store.DeleteColumn:
			w.set(x.Family, x.Qualifier, ts, typeDeleteColumn, nil)
		case store.DeleteFamily:
			w.set(x.Family, nil, ts, typeDeleteFamily, nil)
		case store.DeleteRow:
			for _, f := range w.t.spec.Families {
				w.set(f.Name, nil, ts, typeDeleteFamily, nil)
			}
		case store.DeleteVersion:
			if x.Timestamp == store.LatestTimestamp {
				// HBase deletes the newest version then; with none, the
				// marker lands at the current time.
				c, ok, err := w.latest(m.Row, x.Family, x.Qualifier)
				if err != nil {
					return err
				}
				if ok {
					ts = c.Timestamp
				}
			}
			w.set(x.Family, x.Qualifier, ts, typeDelete, nil)
		}
	}
	return nil
}

// set puts one cell of the row whose prefix add made.
func (w *writer) set(family string, qualifier []byte, ts int64, typ byte, value []byte) {
	w.key = appendCellSuffix(append(w.key[:0], w.prefix...), family, qualifier, ts, typ)
	// Set copies key and value into the batch, so the key buffer is reused.
	_ = w.b.Set(w.key, value, nil)
}

// latest returns the newest visible cell of a column.
func (w *writer) latest(row []byte, family string, qualifier []byte) (store.Cell, bool, error) {
	q, err := newQuery(w.t, []store.Column{{Family: family, Qualifier: nonNil(qualifier)}}, 1, store.TimeRange{}, math.MaxInt)
	if err != nil {
		return store.Cell{}, false, err
	}
	r, err := w.s.getRow(w.t, q, row)
	if err != nil {
		return store.Cell{}, false, fmt.Errorf("table %q row %s: read column %s: %w", w.t.spec.Name, store.Printable(row), family, err)
	}
	if len(r.Cells) == 0 {
		return store.Cell{}, false, nil
	}
	return r.Cells[0], true, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

var errBadCounter = errors.New("counter cell is not an 8-byte big-endian integer")
