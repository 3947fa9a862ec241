package reconcile

import (
	"context"
	"strings"
	"sync"

	"github.com/denorm/denorm/store"
)

// opHook passes every call on to its store, and tells on of each read
// first ("scan", "get" or "getmany", and the table): a test puts a writer's
// batch at a chosen point of a job with it.
type opHook struct {
	store.Store
	on func(op, table string)
	// scanFrom, when set, is told of each scan's table and start first.
	scanFrom func(table string, start []byte)
	// mu makes the job's goroutines tell one at a time.
	mu sync.Mutex
}

func (h *opHook) tell(op, table string, start []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if op == "scan" && h.scanFrom != nil {
		h.scanFrom(table, start)
	}
	h.on(op, table)
}

func (h *opHook) Scan(ctx context.Context, table string, s store.Scan) (store.Scanner, error) {
	h.tell("scan", table, s.Start)
	return h.Store.Scan(ctx, table, s)
}

func (h *opHook) Get(ctx context.Context, table string, g store.Get) (store.Row, error) {
	h.tell("get", table, nil)
	return h.Store.Get(ctx, table, g)
}

func (h *opHook) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	h.tell("getmany", table, nil)
	return store.GetMany(ctx, h.Store, table, gets)
}

// onceAfter is an opHook's on that calls fn once, before the read that
// completes steps ("op table" each) in order, other reads between them;
// *fired reports whether it did.
func onceAfter(fired *bool, fn func(), steps ...string) func(op, table string) {
	next := 0
	return func(op, table string) {
		if *fired || next == len(steps) {
			return
		}
		if strings.Join([]string{op, table}, " ") != steps[next] {
			return
		}
		if next++; next == len(steps) {
			*fired = true
			fn()
		}
	}
}
