package pebble

import (
	"context"
	"fmt"
)

// DiskUsage reports the bytes a table's cells take in Pebble's data files,
// after Pebble's block compression, with the memtable flushed first so that
// everything written so far counts. It is what `denorm cost --measure`
// reports as bytes on disk.
func (s *Store) DiskUsage(ctx context.Context, name string) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t, err := s.table(name)
	if err != nil {
		return 0, fmt.Errorf("disk usage: %w", err)
	}
	if err := s.db.Flush(); err != nil {
		return 0, fmt.Errorf("pebble store: flush before measuring %s: %w", name, err)
	}
	lo, hi := tableBounds(t.id)
	n, err := s.db.EstimateDiskUsage(lo, hi)
	if err != nil {
		return 0, fmt.Errorf("pebble store: disk usage of %s: %w", name, err)
	}
	return int64(n), nil
}

// LSM describes the Pebble database under the store: its levels, files,
// read amplification, compaction debt, cache and filter use, as Pebble
// formats its metrics. Benchmarks log it to show the shape a run left.
func (s *Store) LSM() string {
	if err := s.enter(); err != nil {
		return err.Error()
	}
	defer s.leave()
	return s.db.Metrics().String()
}
