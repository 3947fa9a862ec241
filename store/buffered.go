package store

import (
	"context"
	"strconv"

	"sync"
	"time"
)

// BufferedOptions configure a BufferedMutator.
type BufferedOptions struct {
	// WriteBufferSize flushes once this many bytes are buffered (HBase's
	// hbase.client.write.buffer, 2 MiB by default). 0 means 2 MiB.
	WriteBufferSize int
	// FlushInterval flushes a non-empty buffer at least this often. 0 means
	// only by size, Flush and Close.
	FlushInterval time.Duration
	// Listener is told of every mutation that failed, with its error. Without
	// a listener, failures are returned by the next Flush or Close.
	Listener func(m RowMutation, err error)
}

// DefaultWriteBufferSize is HBase's default client write buffer.
const DefaultWriteBufferSize = 2 << 20

// BufferedMutator groups row mutations into batches, like HBase's
// BufferedMutator. It is safe for concurrent use. No failure is silent: each
// failed mutation reaches the Listener or, without one, the next Flush or
// Close returns an error that counts them.
type BufferedMutator struct {
	st    Store
	table string
	opts  BufferedOptions

	mu      sync.Mutex
	buf     []RowMutation
	size    int
	failed  []error // failures not yet reported, when there is no listener
	closed  bool
	flushMu sync.Mutex // one flush at a time keeps mutations of a row in order

	stop chan struct{}
	done chan struct{}
}

// NewBufferedMutator returns a mutator writing to table through st.
func NewBufferedMutator(st Store, table string, opts BufferedOptions) *BufferedMutator {
	if opts.WriteBufferSize <= 0 {
		opts.WriteBufferSize = DefaultWriteBufferSize
	}
	b := &BufferedMutator{st: st, table: table, opts: opts}
	if opts.FlushInterval > 0 {
		b.stop, b.done = make(chan struct{}), make(chan struct{})
		go b.loop()
	}
	return b
}

func (b *BufferedMutator) loop() {
	defer close(b.done)
	t := time.NewTicker(b.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			// Errors from a timed flush go to the listener or wait for the
			// next Flush; nothing here can return them.
			_ = b.flush(context.Background())
		}
	}
}

// Mutate buffers mutations and flushes when the buffer is full.
func (b *BufferedMutator) Mutate(ctx context.Context, ms ...RowMutation) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	for _, m := range ms {
		b.buf = append(b.buf, m)
		b.size += m.Size()
	}
	full := b.size >= b.opts.WriteBufferSize
	b.mu.Unlock()
	if full {
		return b.flush(ctx)
	}
	return nil
}

// Flush sends everything buffered and waits for it. It returns an error if
// any mutation failed since the last Flush and there is no Listener.
func (b *BufferedMutator) Flush(ctx context.Context) error {
	return b.flush(ctx)
}

func (b *BufferedMutator) flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	batch := b.buf
	b.buf, b.size = nil, 0
	b.mu.Unlock()

	if len(batch) > 0 {
		errs, err := b.st.Batch(ctx, b.table, batch)
		for i, m := range batch {
			e := err
			if e == nil && i < len(errs) {
				e = errs[i]
			}
			if e != nil {
				b.report(m, e)
			}
		}
	}
	b.mu.Lock()
	failed := b.failed
	b.failed = nil
	b.mu.Unlock()
	if len(failed) > 0 {
		return &BatchError{Errs: failed}
	}
	return nil
}

func (b *BufferedMutator) report(m RowMutation, err error) {
	if b.opts.Listener != nil {
		b.opts.Listener(m, err)
		return
	}
	b.mu.Lock()
	b.failed = append(b.failed, err)
	b.mu.Unlock()
}

// Close flushes and stops the mutator.
func (b *BufferedMutator) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	if b.stop != nil {
		close(b.stop)
		<-b.done
	}
	return b.flush(ctx)
}

// BatchError reports the mutations of a flush that failed.
type BatchError struct{ Errs []error }

func (e *BatchError) Error() string {
	if len(e.Errs) == 1 {
		return "1 buffered mutation failed: " + e.Errs[0].Error()
	}
	return strconv.Itoa(len(e.Errs)) + " buffered mutations failed; first: " + e.Errs[0].Error()
}

// Unwrap exposes every failure to errors.Is and errors.As.
func (e *BatchError) Unwrap() []error { return e.Errs }
