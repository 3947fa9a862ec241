package hbase

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/denorm/denorm/store"
)

// Options configure Open. The zero value is usable.
type Options struct {
	// Timeout bounds every call to the gateway, including a scanner's
	// fetches; creating, disabling and deleting a table get at least two
	// minutes. A context deadline, when sooner, wins. 0 means 30s.
	Timeout time.Duration
	// ConnectTimeout bounds dialing one connection. 0 means Timeout.
	ConnectTimeout time.Duration
	// PoolSize is how many connections the store keeps open, which is also
	// how many calls can be in flight at once. 0 means 32. Connections are
	// opened when calls need them, so a caller that makes few calls at once
	// opens few; the writer sends a batch's derived tables at once, and
	// HBase serves concurrent calls with less work each (its log syncs
	// are grouped).
	PoolSize int
	// Framed selects Thrift's framed transport (the server's -f flag);
	// otherwise the buffered one, the server's default.
	Framed bool
	// Compact selects Thrift's compact protocol (the server's -c flag);
	// otherwise the binary one, the server's default.
	Compact bool
	// Namespace holds tables whose names carry no "ns:" prefix, and is the
	// namespace ListTables lists. "" means "default".
	Namespace string
	// MaxCellSize refuses, before sending, a cell whose KeyValue size (20
	// bytes plus row, family, qualifier and value) is larger.
	// 0 means store.DefaultMaxCellSize, which is also HBase's own limit.
	MaxCellSize int
	// MaxRowSize fails reads that return a row larger than this. HBase
	// enforces its own hbase.table.max.rowsize on the server as well.
	// 0 means store.DefaultMaxRowSize.
	MaxRowSize int
	// Durability applies to mutations that ask for DurabilityDefault;
	// DurabilityDefault here leaves the choice to the table (USE_DEFAULT).
	Durability store.Durability
}

const (
	defaultTimeout  = 30 * time.Second
	defaultPoolSize = 32
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = o.Timeout
	}
	if o.PoolSize <= 0 {
		o.PoolSize = defaultPoolSize
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.MaxCellSize <= 0 {
		o.MaxCellSize = store.DefaultMaxCellSize
	}
	if o.MaxRowSize <= 0 {
		o.MaxRowSize = store.DefaultMaxRowSize
	}
	return o
}

// parseURL reads hbase://host:port?param=value... into an address and
// options. Unknown parameters are errors, so that a typo is not silently
// ignored.
func parseURL(u *url.URL) (string, Options, error) {
	var opts Options
	if u.Scheme != "hbase" {
		return "", opts, fmt.Errorf("hbase URL %q: scheme must be hbase", u.Redacted())
	}
	if u.Host == "" {
		return "", opts, fmt.Errorf("hbase URL %q names no host (want hbase://host:9090)", u.Redacted())
	}
	if u.Path != "" && u.Path != "/" {
		return "", opts, fmt.Errorf("hbase URL %q: unexpected path %q (put the namespace in ?namespace=)", u.Redacted(), u.Path)
	}
	addr := u.Host
	if u.Port() == "" {
		addr += ":9090"
	}
	q := u.Query()
	bad := func(name, v, want string) error {
		return fmt.Errorf("hbase URL %q: %s=%q: want %s", u.Redacted(), name, v, want)
	}
	// In name order, so that the same URL always gets the same complaint.
	for _, name := range slices.Sorted(maps.Keys(q)) {
		vs := q[name]
		v := vs[len(vs)-1]
		switch name {
		case "timeout", "connect_timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return "", opts, bad(name, v, "a positive duration such as 2s")
			}
			if name == "timeout" {
				opts.Timeout = d
			} else {
				opts.ConnectTimeout = d
			}
		case "pool", "max_cell_size", "max_row_size":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return "", opts, bad(name, v, "a positive integer")
			}
			switch name {
			case "pool":
				opts.PoolSize = n
			case "max_cell_size":
				opts.MaxCellSize = n
			default:
				opts.MaxRowSize = n
			}
		case "transport":
			switch v {
			case "buffered":
				opts.Framed = false
			case "framed":
				opts.Framed = true
			default:
				return "", opts, bad(name, v, "buffered or framed")
			}
		case "protocol":
			switch v {
			case "binary":
				opts.Compact = false
			case "compact":
				opts.Compact = true
			default:
				return "", opts, bad(name, v, "binary or compact")
			}
		case "namespace":
			if v == "" {
				return "", opts, bad(name, v, "a namespace name")
			}
			opts.Namespace = v
		case "durability":
			d, ok := store.ParseDurability(v)
			if !ok {
				return "", opts, bad(name, v, "sync_wal, async_wal, skip_wal or default")
			}
			opts.Durability = d
		default:
			return "", opts, fmt.Errorf("hbase URL %q: unknown parameter %q (want timeout, connect_timeout, pool, transport, protocol, namespace, max_cell_size, max_row_size, durability)", u.Redacted(), name)
		}
	}
	return addr, opts, nil
}
