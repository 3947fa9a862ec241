package pebble

import (
	"bytes"
	"context"
	"fmt"

	pdb "github.com/cockroachdb/pebble/v2"
)

// compactBatchBytes bounds the deletion batches of a major compaction.
const compactBatchBytes = 4 << 20

// MajorCompact deletes, as HBase's major compaction does, every delete
// marker, every put a marker masks, versions beyond the family maximum and
// cells past their TTL, then has Pebble compact the table's key range so the
// deletions are physical. Writers of the table wait while it runs, so that no
// put arrives under a marker that is being purged. Once a marker is gone, a
// later put at an old timestamp is visible again, as in HBase.
func (s *Store) MajorCompact(ctx context.Context, name string) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	t, err := s.table(name)
	if err != nil {
		return fmt.Errorf("major compact: %w", err)
	}
	t.compactMu.Lock()
	defer t.compactMu.Unlock()

	lo, hi := tableBounds(t.id)
	it, err := s.db.NewIter(&pdb.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return fmt.Errorf("major compact table %q: %w", name, err)
	}
	defer it.Close()
	vis := visibility{t: t, now: s.now()}
	var (
		rk     rawKey
		row    []byte
		b      = s.db.NewBatch()
		purged int
	)
	defer func() { _ = b.Close() }()
	flush := func() error {
		if b.Empty() {
			return nil
		}
		if err := b.Commit(pdb.Sync); err != nil {
			return err
		}
		_ = b.Close()
		b = s.db.NewBatch()
		return nil
	}
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := it.Key()
		if err := parseKey(key, &rk); err != nil {
			return fmt.Errorf("major compact table %q: %w", name, err)
		}
		if !bytes.Equal(rk.rowPrefix, row) {
			row = append(row[:0], rk.rowPrefix...)
			vis.startRow()
		}
		vis.position(&rk)
		if vis.judge(rk.ts, rk.typ) == vVisible {
			continue
		}
		_ = b.Delete(key, nil)
		purged++
		if b.Len() >= compactBatchBytes {
			if err := flush(); err != nil {
				return fmt.Errorf("major compact table %q: %w", name, err)
			}
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("major compact table %q: %w", name, err)
	}
	if err := flush(); err != nil {
		return fmt.Errorf("major compact table %q: %w", name, err)
	}
	if purged > 0 {
		if err := s.db.Compact(ctx, lo, hi, false); err != nil {
			return fmt.Errorf("major compact table %q: pebble compaction: %w", name, err)
		}
	}
	return nil
}
