package hbase

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/denorm/denorm/store"
)

// proxy forwards loopback connections to a backend and can cut them all,
// as a gateway restart does to a client's idle connections.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, backend string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", backend)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return p
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func TestStaleConnectionIsReplaced(t *testing.T) {
	f := newFakeGateway()
	px := newProxy(t, serveFake(t, f))
	s, err := Open(t.Context(), px.ln.Addr().String(), Options{PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	px.cut() // the pooled connection is now dead
	if _, err := s.Get(t.Context(), "t", store.Get{Row: []byte("r")}); err != nil {
		t.Fatalf("Get over a dropped idle connection: %v", err)
	}
	// Increments are never sent twice: the caller sees the failure.
	px.cut()
	_, err = s.Increment(t.Context(), "t", store.Increment{Row: []byte("r"), Columns: []store.IncrementColumn{{Family: "f", Qualifier: []byte("c"), Delta: 1}}})
	if err == nil {
		t.Fatal("Increment over a dropped connection reported success")
	}
}
