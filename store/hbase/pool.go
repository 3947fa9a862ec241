package hbase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// conn is one Thrift connection and the client speaking over it. It is used
// by one call at a time.
type conn struct {
	nc     net.Conn
	client *hbase2.THBaseServiceClient
}

// pool hands out connections, at most size at a time. Idle connections are
// kept for reuse; a connection whose last call broke the stream is closed.
type pool struct {
	addr string
	opts Options
	// dial is replaceable so that tests can run the pool over net.Pipe.
	dial func(ctx context.Context, addr string) (net.Conn, error)

	slots chan struct{} // one token per connection that may be in use

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

func newPool(addr string, opts Options) *pool {
	d := &net.Dialer{Timeout: opts.ConnectTimeout}
	return &pool{
		addr:  addr,
		opts:  opts,
		dial:  func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) },
		slots: make(chan struct{}, opts.PoolSize),
	}
}

// get waits for a free slot and returns an idle connection (reused) or,
// when there is none or fresh is set, a new one.
func (p *pool) get(ctx context.Context, fresh bool) (*conn, bool, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("wait for a free connection to %s: %w", p.addr, ctx.Err())
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, false, store.ErrClosed
	}
	if n := len(p.idle); n > 0 && !fresh {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, true, nil
	}
	p.mu.Unlock()
	c, err := p.open(ctx)
	if err != nil {
		<-p.slots
		return nil, false, err
	}
	return c, false, nil
}

func (p *pool) open(ctx context.Context) (*conn, error) {
	dctx, cancel := context.WithTimeout(ctx, p.opts.ConnectTimeout)
	defer cancel()
	nc, err := p.dial(dctx, p.addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the HBase Thrift2 gateway at %s: %w", p.addr, err)
	}
	// Thrift's default caps (100 MB a message, 16 MB a frame) are lower
	// than what HBase legitimately returns: one scanner fetch may carry
	// many rows of up to max_row_size. The row limit is enforced on the
	// decoded rows instead.
	cfg := &thrift.TConfiguration{MaxMessageSize: math.MaxInt32, MaxFrameSize: math.MaxInt32}
	var tr thrift.TTransport = rawTransport{nc}
	if p.opts.Framed {
		tr = thrift.NewTFramedTransportConf(tr, cfg)
	} else {
		tr = thrift.NewTBufferedTransport(tr, 64<<10)
	}
	var prot thrift.TProtocol
	if p.opts.Compact {
		prot = thrift.NewTCompactProtocolConf(tr, cfg)
	} else {
		prot = thrift.NewTBinaryProtocolConf(tr, cfg)
	}
	return &conn{nc: nc, client: hbase2.NewTHBaseServiceClient(thrift.NewTStandardClient(prot, prot))}, nil
}

// put returns a connection after a call. broken connections are closed:
// after a transport error the stream may hold half a message.
func (p *pool) put(c *conn, broken bool) {
	defer func() { <-p.slots }()
	p.mu.Lock()
	if broken || p.closed {
		p.mu.Unlock()
		_ = c.nc.Close() // the connection is dropped either way
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

func (p *pool) close() error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	var errs []error
	for _, c := range idle {
		if err := c.nc.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rpcFunc is one call on a client.
type rpcFunc func(ctx context.Context, c *hbase2.THBaseServiceClient) error

// do runs one RPC on a pooled connection under the per-call timeout; see
// attempt. An idle connection the gateway dropped meanwhile (restart, idle
// close) fails at once with a reset or EOF: do then tries once more on a new
// connection, since the request cannot have been applied twice in a way that
// matters for callers that pass retry (reads, admin calls, and writes with
// explicit timestamps, which HBase applies idempotently).
func (p *pool) do(ctx context.Context, retry bool, timeout time.Duration, rpc rpcFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reused, err := p.attempt(ctx, timeout, rpc, false)
	if err != nil && retry && reused && stale(err) && ctx.Err() == nil {
		_, err = p.attempt(ctx, timeout, rpc, true)
	}
	return err
}

// attempt makes one call. The deadline is set on the socket, so a hung
// server or a cancelled context interrupts even a blocked read. It reports
// whether the connection had been used before.
func (p *pool) attempt(ctx context.Context, timeout time.Duration, rpc rpcFunc, fresh bool) (bool, error) {
	c, reused, err := p.get(ctx, fresh)
	if err != nil {
		return false, err
	}
	deadline, _ := ctx.Deadline()
	if err := c.nc.SetDeadline(deadline); err != nil {
		p.put(c, true)
		return reused, fmt.Errorf("set deadline on connection to %s: %w", p.addr, err)
	}
	stop := context.AfterFunc(ctx, func() {
		// Unblocks a read or write in progress; the connection is then
		// broken and is not reused.
		_ = c.nc.SetDeadline(time.Unix(1, 0))
	})
	err = rpc(ctx, c.client)
	interrupted := !stop()
	broken := interrupted || (err != nil && !serverSide(err))
	p.put(c, broken)
	if err != nil && !serverSide(err) {
		if cerr := ctx.Err(); cerr != nil {
			return reused, fmt.Errorf("call to %s: %w (%v)", p.addr, cerr, err)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return reused, fmt.Errorf("call to %s: no answer within %v: %w", p.addr, timeout, context.DeadlineExceeded)
		}
		return reused, fmt.Errorf("call to %s: %w", p.addr, err)
	}
	return reused, err
}

// stale reports the errors of a connection the server closed while it sat
// idle in the pool.
func stale(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// serverSide reports whether err is an answer the server sent in full, after
// which the connection is still in step.
func serverSide(err error) bool {
	var ioe *hbase2.TIOError
	var iae *hbase2.TIllegalArgument
	if errors.As(err, &ioe) || errors.As(err, &iae) {
		return true
	}
	var ae thrift.TApplicationException
	if errors.As(err, &ae) {
		// These two the client raises itself on a reply it could not
		// match, leaving the rest of that reply unread.
		t := ae.TypeId()
		return t != thrift.BAD_SEQUENCE_ID && t != thrift.WRONG_METHOD_NAME
	}
	return false
}

// rawTransport adapts a net.Conn to thrift.TTransport without touching its
// deadlines, which pool.do manages.
type rawTransport struct{ net.Conn }

func (rawTransport) Open() error                 { return nil }
func (rawTransport) IsOpen() bool                { return true }
func (rawTransport) Flush(context.Context) error { return nil }
func (rawTransport) RemainingBytes() uint64      { return math.MaxUint64 }
