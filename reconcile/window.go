package reconcile

import (
	"time"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
)

// A counter window (Options.Since) limits the counter check to the counter
// rows whose key's time part is at or after the cutoff. Old counter rows are
// left as they are, for two reasons: recomputing them costs the most and
// changes the least (their entities rarely change), and a counter table
// with a TTL has already dropped them, so recomputing them from primary rows
// that live longer would bring expired counters back.
//
// The time part is the key's first day(...) part, or its first timestamp
// field (plain or reversed). A counter table whose key has none holds
// all-time totals, which no window can split: it is checked whole.

const msPerDay = 24 * 60 * 60 * 1000

// timePart is the index of a key's time part, or -1.
func timePart(spec *rowkey.Spec) int {
	for i := 0; i < spec.Len(); i++ {
		p := spec.Part(i)
		if p.Func == rowkey.Day || (p.Type == rowkey.Timestamp && (p.Func == rowkey.Plain || p.Func == rowkey.Reverse)) {
			return i
		}
	}
	return -1
}

// window decides which counter rows a run checks.
type window struct {
	cutoff int64 // epoch ms; 0 means no window
	keys   map[string]windowKey
}

// windowKey is a counter table and the index of its key's time part (-1:
// none).
type windowKey struct {
	table *schema.Table
	part  int
}

// newWindowMs is newWindow with the cutoff in epoch ms, as a plan keeps
// it; 0 means no window.
func newWindowMs(plan *schema.Plan, ms int64) *window {
	if ms == 0 {
		return newWindow(plan, time.Time{})
	}
	return newWindow(plan, time.UnixMilli(ms))
}

func newWindow(plan *schema.Plan, since time.Time) *window {
	w := &window{keys: map[string]windowKey{}}
	if since.IsZero() {
		return w
	}
	w.cutoff = since.UnixMilli()
	for _, t := range plan.Tables {
		if t.Role == schema.RoleCounter {
			w.keys[t.Name] = windowKey{table: t, part: timePart(t.Key)}
		}
	}
	return w
}

// covers reports whether the counter row key of table is in the window.
// A key that does not decode is covered: the check then reports it rather
// than skipping it unseen.
func (w *window) covers(table string, key []byte) bool {
	if w.cutoff == 0 {
		return true
	}
	k, ok := w.keys[table]
	if !ok || k.part < 0 {
		return true
	}
	sk, ok := layout.CounterKey(k.table, key)
	if !ok {
		return true
	}
	parts, err := k.table.Key.Decode(sk)
	if err != nil || k.part >= len(parts) {
		return true
	}
	p := parts[k.part]
	ms, ok := p.Value.(int64)
	if !ok {
		return true
	}
	if p.Part.Func == rowkey.Day {
		// The day's midnight: the day overlaps the window when it ends
		// after the cutoff.
		return ms+msPerDay > w.cutoff
	}
	return ms >= w.cutoff
}
