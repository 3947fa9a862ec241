package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/denorm/denorm/store"
)

// Increment reads each counter under the row lock, adds its delta and writes
// the sums in one batch. A new value is stamped with the clock, or one past
// the old value's timestamp if that is later, so that it always becomes the
// newest version.
func (s *Store) Increment(ctx context.Context, name string, inc store.Increment) ([]int64, error) {
	t, err := s.begin(ctx, "increment", name)
	if err != nil {
		return nil, err
	}
	defer s.leave()
	m := store.RowMutation{Row: inc.Row}
	for _, c := range inc.Columns {
		m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Value: make([]byte, 8)})
	}
	w := s.newWriter(t)
	defer w.close()
	if err := w.validate(&m); err != nil {
		return nil, fmt.Errorf("increment: %w", err)
	}
	t.compactMu.RLock()
	defer t.compactMu.RUnlock()
	held := s.locks.lock(t.id, [][]byte{inc.Row}, nil, false)
	defer s.locks.unlock(held, false)

	out := make([]int64, len(inc.Columns))
	for i, c := range inc.Columns {
		cur, ok, err := w.latest(inc.Row, c.Family, c.Qualifier)
		if err != nil {
			return nil, fmt.Errorf("increment: %w", err)
		}
		var v int64
		ts := w.now
		if ok {
			if len(cur.Value) != 8 {
				return nil, fmt.Errorf("increment table %q row %s column %s:%s: value is %d bytes: %w",
					name, store.Printable(inc.Row), c.Family, store.Printable(c.Qualifier), len(cur.Value), errBadCounter)
			}
			v = int64(binary.BigEndian.Uint64(cur.Value))
			ts = max(ts, cur.Timestamp+1)
		}
		// Two deltas to the same column in one call add up.
		for j := 0; j < i; j++ {
			if inc.Columns[j].Family == c.Family && bytes.Equal(inc.Columns[j].Qualifier, c.Qualifier) {
				v = out[j]
				ts = m.Mutations[j].Timestamp
			}
		}
		v += c.Delta
		out[i] = v
		binary.BigEndian.PutUint64(m.Mutations[i].Value, uint64(v))
		m.Mutations[i].Timestamp = ts
	}
	if err := w.add(&m); err != nil {
		return nil, fmt.Errorf("increment: %w", err)
	}
	if err := w.commit(s.syncFor(store.DurabilityDefault)); err != nil {
		return nil, fmt.Errorf("increment: %w", err)
	}
	t.regions.write(inc.Row)
	return out, nil
}

// CheckAndMutate holds the row lock across the check and the write.
func (s *Store) CheckAndMutate(ctx context.Context, name string, cond store.Condition, m store.RowMutation) (bool, error) {
	t, err := s.begin(ctx, "check and mutate", name)
	if err != nil {
		return false, err
	}
	defer s.leave()
	if _, ok := t.fams[cond.Family]; !ok {
		return false, fmt.Errorf("check and mutate table %q family %q: %w", name, cond.Family, store.ErrFamilyNotFound)
	}
	w := s.newWriter(t)
	defer w.close()
	if err := w.validate(&m); err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	t.compactMu.RLock()
	defer t.compactMu.RUnlock()
	held := s.locks.lock(t.id, [][]byte{m.Row}, nil, false)
	defer s.locks.unlock(held, false)

	cur, ok, err := w.latest(m.Row, cond.Family, cond.Qualifier)
	if err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	if cond.Absent == ok || (!cond.Absent && !bytes.Equal(cur.Value, cond.Value)) {
		return false, nil
	}
	if err := w.add(&m); err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	if err := w.commit(s.syncFor(m.Durability)); err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	t.regions.write(m.Row)
	return true, nil
}
