package store

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// DefaultURL is the store used when none is given: the embedded backend in
// ./denorm-data.
const DefaultURL = "pebble://./denorm-data"

// Opener opens a store from a parsed URL.
type Opener func(ctx context.Context, u *url.URL) (Store, error)

// The registry is the one piece of package state, and only backends' init
// functions write it: the database/sql pattern, so that store never imports
// its backends.
var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes a backend available under a URL scheme. It is meant for
// backends' init functions; registering a scheme twice is an error.
func Register(scheme string, open Opener) error {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[scheme]; dup {
		return fmt.Errorf("store: scheme %q registered twice", scheme)
	}
	registry[scheme] = open
	return nil
}

// Schemes lists the registered URL schemes.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []string
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Open opens the store a URL names: pebble:///abs/dir or pebble://./rel/dir
// for the embedded store, hbase://host:9090 for HBase through its Thrift2
// gateway. An empty URL means DefaultURL. The backend's package must be
// imported (for its side effect) by the program.
func Open(ctx context.Context, rawURL string) (Store, error) {
	if rawURL == "" {
		rawURL = DefaultURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: parse URL %q: %w", rawURL, &BadURLError{err})
	}
	if u.Scheme == "" {
		return nil, &BadURLError{fmt.Errorf("store: URL %q has no scheme; want one of %s", rawURL, strings.Join(Schemes(), ", "))}
	}
	registryMu.RLock()
	open, ok := registry[u.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, &BadURLError{fmt.Errorf("store: no backend for scheme %q in %q; registered: %s", u.Scheme, rawURL, strings.Join(Schemes(), ", "))}
	}
	s, err := open(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", rawURL, err)
	}
	return s, nil
}
