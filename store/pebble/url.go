package pebble

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/denorm/denorm/store"
)

func init() {
	// Registering can only fail on a duplicate scheme, which would be a
	// programming error in this package; the error has nowhere to go from init.
	_ = store.Register("pebble", openURL)
}

func openURL(ctx context.Context, u *url.URL) (store.Store, error) {
	dir, opts, err := parseURL(u)
	if err != nil {
		return nil, &store.BadURLError{Err: err}
	}
	return Open(ctx, dir, opts)
}

// parseURL reads pebble:///abs/dir and pebble://./rel/dir (the host "."
// marks a path relative to the working directory).
func parseURL(u *url.URL) (string, Options, error) {
	var opts Options
	var dir string
	switch u.Host {
	case "":
		dir = u.Path
	case ".":
		dir = "." + u.Path
	default:
		return "", opts, fmt.Errorf("pebble URL %q: host must be empty (pebble:///abs/dir) or \".\" (pebble://./rel/dir), not %q", u.Redacted(), u.Host)
	}
	if u.Path == "" || u.Path == "/" {
		return "", opts, fmt.Errorf("pebble URL %q names no directory", u.Redacted())
	}
	dir = filepath.Clean(dir)
	q := u.Query()
	// Every unknown parameter, sorted: the map's order would make the
	// message change from run to run.
	var unknown []string
	for k := range q {
		switch k {
		case "max_cell_size", "max_row_size", "durability", "cache_size":
		default:
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return "", opts, fmt.Errorf("pebble URL %q: unknown parameter %s (want max_cell_size, max_row_size, durability, cache_size)", u.Redacted(), strings.Join(unknown, ", "))
	}
	intParam := func(name string, dst *int) error {
		v := q.Get(name)
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("pebble URL %q: %s=%q is not a positive integer", u.Redacted(), name, v)
		}
		*dst = n
		return nil
	}
	if err := intParam("max_cell_size", &opts.MaxCellSize); err != nil {
		return "", opts, err
	}
	if err := intParam("max_row_size", &opts.MaxRowSize); err != nil {
		return "", opts, err
	}
	var cache int
	if err := intParam("cache_size", &cache); err != nil {
		return "", opts, err
	}
	opts.CacheSize = int64(cache)
	if v := q.Get("durability"); v != "" {
		d, ok := store.ParseDurability(v)
		if !ok {
			return "", opts, fmt.Errorf("pebble URL %q: durability=%q: want sync_wal, async_wal or skip_wal", u.Redacted(), v)
		}
		opts.Durability = d
	}
	return dir, opts, nil
}
