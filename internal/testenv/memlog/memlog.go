// Package memlog is a log in memory for tests of writers: it reads ahead as
// a file or a Kafka partition does, with batches of random sizes. It lives
// apart from testenv because it needs package source, whose own tests use
// testenv.
package memlog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/source"
)

// Log is a log in memory that reads ahead (write.Ahead): Next hands out
// batches of random sizes, and Ready says yes or no at random, so that
// write.Run takes both of its paths, staging a batch while the last one is
// written and not. A restart reads again from the last mark committed.
type Log struct {
	recs      []source.Record
	pos       int
	committed int
	sizes     *rand.Rand
	ready     *rand.Rand
}

// New is a log of evs in stream, the first at offset first and each
// next one offset further.
func New(t testing.TB, stream string, first int64, evs []*event.Event, seed int64) *Log {
	t.Helper()
	l := &Log{sizes: rand.New(rand.NewSource(seed)), ready: rand.New(rand.NewSource(seed + 1))}
	for i, ev := range evs {
		off := first + int64(i)
		l.recs = append(l.recs, source.Record{Data: EventLine(t, ev), Offset: off, Stream: stream, Where: fmt.Sprintf("%s@%d", stream, off)})
	}
	return l
}

// EventLine is ev as a line of the event format.
func EventLine(t testing.TB, ev *event.Event) []byte {
	t.Helper()
	m := map[string]any{"id": ev.ID, "entity": ev.Entity, "key": ev.Key, "version": ev.Version, "op": string(ev.Op)}
	if ev.State != nil {
		m["state"] = ev.State
	}
	if ev.Hints != nil {
		m["hints"] = ev.Hints
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Next hands out up to max records, and at most six.
func (l *Log) Next(_ context.Context, max int) ([]source.Record, error) {
	if l.pos == len(l.recs) {
		return nil, io.EOF
	}
	end := min(l.pos+min(max, 1+l.sizes.Intn(6)), len(l.recs))
	out := l.recs[l.pos:end]
	l.pos = end
	return out, nil
}

// Commit makes everything Next returned the restart point.
func (l *Log) Commit(context.Context) error { l.committed = l.pos; return nil }

// Mark names everything Next returned so far.
func (l *Log) Mark() any { return l.pos }

// CommitMark makes the records up to mark the restart point; marks must
// come in order.
func (l *Log) CommitMark(_ context.Context, mark any) error {
	if m := mark.(int); m < l.committed {
		return fmt.Errorf("commit of mark %d after mark %d", m, l.committed)
	}
	l.committed = mark.(int)
	return nil
}

// Ready says at random, three times in four, that Next may be called with
// a batch in hand.
func (l *Log) Ready() bool { return l.ready.Intn(4) > 0 }

// Restart is a new process: it reads from the last commit.
func (l *Log) Restart() { l.pos = l.committed }

// DeadLetters keeps the dead letters in memory.
type DeadLetters struct{ Recs []source.Record }

// Add keeps rec.
func (d *DeadLetters) Add(_ context.Context, rec source.Record, _ error) error {
	d.Recs = append(d.Recs, rec)
	return nil
}

// Flush has nothing to make durable.
func (d *DeadLetters) Flush(context.Context) error { return nil }
