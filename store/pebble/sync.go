package pebble

import (
	"context"
	"fmt"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

var _ store.Syncer = (*Store)(nil)

// Sync makes every write made so far durable. Pebble has one write-ahead
// log, written in commit order, so syncing a record appended after them
// syncs them all.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.db.LogData(nil, pdb.Sync); err != nil {
		return fmt.Errorf("pebble store: sync log: %w", err)
	}
	return nil
}
