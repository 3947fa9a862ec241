package hbase

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

func init() {
	// Register fails only on a duplicate scheme, a programming error that
	// init has no way to report.
	_ = store.Register("hbase", openURL)
}

func openURL(ctx context.Context, u *url.URL) (store.Store, error) {
	addr, opts, err := parseURL(u)
	if err != nil {
		return nil, &store.BadURLError{Err: err}
	}
	return Open(ctx, addr, opts)
}

// Store is a store.Store on HBase's Thrift2 gateway. It is safe for
// concurrent use.
type Store struct {
	addr   string
	opts   Options
	pool   *pool
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the Thrift2 gateway at addr (host:port) and checks that
// it answers.
func Open(ctx context.Context, addr string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	s := &Store{addr: addr, opts: opts, pool: newPool(addr, opts)}
	// A cheap call that every Thrift2 server has proves the address,
	// transport and protocol all agree before the first real request.
	if err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
		_, err := c.TableExists(ctx, &hbase2.TTableName{Ns: []byte("hbase"), Qualifier: []byte("meta")})
		return err
	}); err != nil {
		_ = s.pool.close()
		return nil, fmt.Errorf("hbase: check the Thrift2 gateway at %s (transport framed=%v, protocol compact=%v): %w", addr, opts.Framed, opts.Compact, err)
	}
	return s, nil
}

// call runs an RPC that may be sent twice (see pool.do).
func (s *Store) call(ctx context.Context, rpc rpcFunc) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.pool.do(ctx, true, s.opts.Timeout, rpc)
}

// callOnce runs an RPC whose effect or answer would change if it were
// applied twice: increments, and check-and-mutates.
func (s *Store) callOnce(ctx context.Context, rpc rpcFunc) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.pool.do(ctx, false, s.opts.Timeout, rpc)
}

// minAdminTimeout is the least time a create, disable or delete gets:
// HBase runs them as master procedures that take seconds, and a timeout
// tuned for reads and writes must not abort them half way.
const minAdminTimeout = 2 * time.Minute

// callAdmin runs a table-changing admin call once (a resend could answer
// "table exists" for a create that had succeeded), with a longer deadline.
func (s *Store) callAdmin(ctx context.Context, rpc rpcFunc) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.pool.do(ctx, false, max(s.opts.Timeout, minAdminTimeout), rpc)
}

// Close releases the connections. Calls in flight finish; later ones
// return store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.pool.close(); err != nil {
		return fmt.Errorf("hbase: close connections to %s: %w", s.addr, err)
	}
	return nil
}

// tableName splits "ns:name" and applies the default namespace.
func (s *Store) tableName(table string) *hbase2.TTableName {
	if ns, q, ok := strings.Cut(table, ":"); ok {
		return &hbase2.TTableName{Ns: []byte(ns), Qualifier: []byte(q)}
	}
	return &hbase2.TTableName{Ns: []byte(s.opts.Namespace), Qualifier: []byte(table)}
}

// wireName is the table as data calls take it: HBase's full name, where
// the default namespace is left out.
func (s *Store) wireName(table string) []byte {
	if strings.Contains(table, ":") || s.opts.Namespace == "default" {
		return []byte(table)
	}
	return []byte(s.opts.Namespace + ":" + table)
}

// explain turns a failed call into a wrapped error that names what was
// being done and, where it can tell, the store error it amounts to. When
// the server's text is not conclusive it asks whether the table exists,
// since HBase reports a missing table by its bare name.
func (s *Store) explain(ctx context.Context, what, table string, row []byte, err error) error {
	if errors.Is(err, store.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	msg, fromServer := serverMessage(err)
	if !fromServer {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	if known := classify(table, row, msg); known != nil {
		return wrapServer(what, known, err)
	}
	if table != "" {
		exists, xerr := s.tableExists(ctx, table)
		if xerr == nil && !exists {
			return wrapServer(what, store.ErrTableNotFound, err)
		}
	}
	return wrapServer(what, nil, err)
}

func (s *Store) tableExists(ctx context.Context, table string) (bool, error) {
	var ok bool
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		ok, err = c.TableExists(ctx, s.tableName(table))
		return err
	})
	return ok, err
}

// Get reads one row.
func (s *Store) Get(ctx context.Context, table string, g store.Get) (store.Row, error) {
	var res []store.Row
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		args := hbase2.THBaseServiceGetArgs{Table: s.wireName(table), Tget: tget(g)}
		res, err = callRows(ctx, c, "get", &args, &results{single: true})
		return err
	})
	if err != nil {
		return store.Row{}, s.explain(ctx, fmt.Sprintf("get row %s of %s", store.Printable(g.Row), table), table, g.Row, err)
	}
	var row store.Row
	if len(res) > 0 {
		row = res[0]
	}
	return s.gotRow(table, g.Row, row)
}

// Mutate applies one row's mutations atomically: a single put or delete
// when that covers them, mutateRow otherwise.
func (s *Store) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	what := func() string { return fmt.Sprintf("mutate row %s of %s", store.Printable(m.Row), table) } // words for a failure only
	if err := checkCells(table, m, s.opts.MaxCellSize); err != nil {
		return fmt.Errorf("hbase: %s: %w", what(), err)
	}
	p, err := planMutation(m, s.opts.Durability, nil)
	if err != nil {
		return fmt.Errorf("hbase: %s: %w", what(), err)
	}
	if err := s.apply(ctx, table, m.Row, p); err != nil {
		return s.explain(ctx, what(), table, m.Row, err)
	}
	return nil
}

func (s *Store) apply(ctx context.Context, table string, row []byte, p plan) error {
	name := s.wireName(table)
	return s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
		switch {
		case p.put == nil && len(p.deletes) == 0:
			return nil
		case p.single() && p.put != nil:
			return c.Put(ctx, name, p.put)
		case p.single():
			return c.DeleteSingle(ctx, name, p.deletes[0])
		default:
			return c.MutateRow(ctx, name, p.rowMutations(row))
		}
	})
}

// Increment adds to counters atomically on the row and returns the new
// values in the order of inc.Columns.
func (s *Store) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	what := func() string { return fmt.Sprintf("increment row %s of %s", store.Printable(inc.Row), table) } // words for a failure only
	if len(inc.Columns) == 0 {
		return nil, nil
	}
	// HBase keeps one cell per column in an Increment, so repeats of a
	// column are summed here rather than lost.
	type key struct{ family, qualifier string }
	sums := map[key]int64{}
	var order []key
	for _, c := range inc.Columns {
		if c.Family == "" {
			return nil, fmt.Errorf("hbase: %s: a column names no family", what())
		}
		k := key{c.Family, string(c.Qualifier)}
		if _, seen := sums[k]; !seen {
			order = append(order, k)
		}
		sums[k] += c.Delta
	}
	ret := true
	t := &hbase2.TIncrement{Row: inc.Row, ReturnResults: &ret, Durability: durability(store.DurabilityDefault, s.opts.Durability)}
	for _, k := range order {
		amount := sums[k]
		t.Columns = append(t.Columns, &hbase2.TColumnIncrement{Family: []byte(k.family), Qualifier: nonNil([]byte(k.qualifier)), Amount: amount})
	}
	var res *hbase2.TResult_
	err := s.callOnce(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		res, err = c.Increment(ctx, s.wireName(table), t)
		return err
	})
	if err != nil {
		return nil, s.explain(ctx, what(), table, inc.Row, err)
	}
	got := map[key]int64{}
	for _, cv := range res.GetColumnValues() {
		v, err := decodeCounter(cv.Value)
		if err != nil {
			return nil, fmt.Errorf("hbase: %s: column %s:%s: %w", what(), cv.Family, store.Printable(cv.Qualifier), err)
		}
		got[key{string(cv.Family), string(cv.Qualifier)}] = v
	}
	out := make([]int64, len(inc.Columns))
	for i, c := range inc.Columns {
		v, ok := got[key{c.Family, string(c.Qualifier)}]
		if !ok {
			return nil, fmt.Errorf("hbase: %s: the server returned no value for %s:%s", what(), c.Family, store.Printable(c.Qualifier))
		}
		out[i] = v
	}
	return out, nil
}

func decodeCounter(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("counter value is %d bytes, want 8", len(b))
	}
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return int64(v), nil
}

// CheckAndMutate applies m when the newest value of the condition's column
// equals cond.Value (or, with cond.Absent, when there is none).
func (s *Store) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	what := func() string { return fmt.Sprintf("check and mutate row %s of %s", store.Printable(m.Row), table) } // words for a failure only
	if err := checkCells(table, m, s.opts.MaxCellSize); err != nil {
		return false, fmt.Errorf("hbase: %s: %w", what(), err)
	}
	p, err := planMutation(m, s.opts.Durability, nil)
	if err != nil {
		return false, fmt.Errorf("hbase: %s: %w", what(), err)
	}
	if cond.Family == "" {
		return false, fmt.Errorf("hbase: %s: the condition names no family", what())
	}
	// HBase's gateway hands the value straight to the check and fails on
	// an unset one, so absence is asked as "equals the empty value": HBase
	// takes an empty expected value to mean "no such cell", and it also
	// accepts a cell whose value is empty. The reverse holds as well: a
	// condition on an empty value matches an absent cell. Both are HBase's
	// own semantics (HRegion's check), not this client's.
	value := nonNil(cond.Value)
	if cond.Absent {
		value = []byte{}
	}
	var ok bool
	err = s.callOnce(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		ok, err = c.CheckAndMutate(ctx, s.wireName(table), m.Row, []byte(cond.Family), nonNil(cond.Qualifier),
			hbase2.TCompareOperator_EQUAL, value, p.rowMutations(m.Row))
		return err
	})
	if err != nil {
		return false, s.explain(ctx, what(), table, m.Row, err)
	}
	return ok, nil
}
