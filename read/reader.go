package read

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Limits applied when neither the caller nor the schema sets one.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// ErrBadRequest is wrapped by every error that is the caller's fault: an
// unknown query, a missing or extra field, a value of the wrong type, a bad
// token, a refused full scan. Servers map it to 400.
var ErrBadRequest = errors.New("read: bad request")

// Options configure a Reader.
type Options struct {
	DefaultLimit int // 0 means DefaultLimit
	MaxLimit     int // 0 means MaxLimit; larger requested limits are cut to it
	Logger       *slog.Logger
}

// Reader runs the queries of one plan against one store. It holds no
// mutable state, so one Reader serves concurrent requests.
type Reader struct {
	plan *schema.Plan
	st   store.Store
	opts Options
	log  *slog.Logger
	// local is store.Local of the store: reads that are independent of
	// each other are sent at once only when it is false. Tests clear it to
	// run the concurrent paths on the embedded store.
	local bool
	// parts caps the parts a page's verification runs in; 0 is GOMAXPROCS
	// on a store that is not local, and 1 on one that is. Tests set it to
	// check that the parts agree.
	parts int
}

// New returns a Reader.
func New(plan *schema.Plan, st store.Store, opts Options) *Reader {
	if opts.DefaultLimit <= 0 {
		opts.DefaultLimit = DefaultLimit
	}
	if opts.MaxLimit <= 0 {
		opts.MaxLimit = MaxLimit
	}
	if opts.DefaultLimit > opts.MaxLimit {
		opts.DefaultLimit = opts.MaxLimit
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Reader{plan: plan, st: st, opts: opts, log: lg, local: store.Local(st)}
}

// Request is one query call.
type Request struct {
	Query string
	// Values holds a value for each field the query is by (see ParseValue
	// for text input).
	Values map[string]any
	Limit  int    // 0: the query's limit, else the reader's default
	Next   string // a resume token from an earlier Result
	// Repair deletes the stale thin-index entries the read finds.
	Repair bool
	// AllowFullScan permits a query that fixes no key part (batch use).
	AllowFullScan bool
}

// Result is one page of a query.
type Result struct {
	Rows         []map[string]any `json:"rows"`
	DroppedStale int              `json:"dropped_stale"`
	Repaired     int              `json:"repaired"`
	Next         string           `json:"next"`
}

// query is a schema query with the tables it reads resolved.
type query struct {
	q       *schema.Query
	t       *schema.Table
	ent     *schema.Entity
	primary *schema.Table
}

func (r *Reader) resolve(name string) (*query, error) {
	q := r.plan.Query(name)
	if q == nil {
		return nil, fmt.Errorf("%w: no query %q", ErrBadRequest, name)
	}
	t := r.plan.Table(q.Table)
	if t == nil || t.Key == nil {
		return nil, fmt.Errorf("read: query %s: table %q is not usable", name, q.Table)
	}
	ent := r.plan.Entity(t.Entity)
	if ent == nil {
		return nil, fmt.Errorf("read: query %s: table %s has no entity", name, t.Name)
	}
	prim := r.plan.Primary(ent.Name)
	if prim == nil {
		return nil, fmt.Errorf("read: query %s: entity %s has no primary table", name, ent.Name)
	}
	return &query{q: q, t: t, ent: ent, primary: prim}, nil
}

// Fields lists the fields a query needs values for, in declared order.
func (r *Reader) Fields(name string) ([]string, error) {
	qq, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	return append([]string(nil), qq.q.By...), nil
}

// ParseValue converts the text form of a value for a query's field: a
// timestamp as RFC 3339 or epoch milliseconds, numbers in decimal.
func (r *Reader) ParseValue(name, field, text string) (any, error) {
	qq, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	f := qq.ent.Field(field)
	if f == nil || !contains(qq.q.By, field) {
		return nil, fmt.Errorf("%w: query %s is not by %q (by %v)", ErrBadRequest, name, field, qq.q.By)
	}
	v, err := parseText(f.Type, text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadRequest, field, err)
	}
	return v, nil
}

// Run executes one request.
func (r *Reader) Run(ctx context.Context, req Request) (*Result, error) {
	qq, err := r.resolve(req.Query)
	if err != nil {
		return nil, err
	}
	// The query's client profile, if it names one, sets its budget.
	if to := r.plan.Client.Effective(qq.q.Profile).OperationTimeout; to > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, to)
		defer cancel()
	}
	vals := rowkey.Values{}
	for _, f := range qq.q.By {
		v, ok := req.Values[f]
		if !ok || v == nil {
			return nil, fmt.Errorf("%w: query %s needs %s (by %v)", ErrBadRequest, req.Query, f, qq.q.By)
		}
		fd := qq.ent.Field(f)
		if fd == nil {
			return nil, fmt.Errorf("read: query %s: no field %s", req.Query, f)
		}
		n, err := rowkey.Normalize(fd.Type, v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadRequest, f, err)
		}
		vals[f] = n
	}
	// Where predicates are constants of the query: they fix key parts and
	// filter rows as the caller's fields do.
	for _, w := range qq.q.Where {
		fd := qq.ent.Field(w.Field)
		if fd == nil {
			return nil, fmt.Errorf("read: query %s: no field %s", req.Query, w.Field)
		}
		v, err := parseText(fd.Type, w.Value)
		if err != nil {
			return nil, fmt.Errorf("read: query %s: where %s: %w", req.Query, w.Field, err)
		}
		vals[w.Field] = v
	}
	for _, f := range slices.Sorted(maps.Keys(req.Values)) { // the same field named every time
		if !contains(qq.q.By, f) {
			return nil, fmt.Errorf("%w: query %s is not by %q (by %v)", ErrBadRequest, req.Query, f, qq.q.By)
		}
	}
	limit := req.Limit
	if limit < 0 {
		return nil, fmt.Errorf("%w: negative limit", ErrBadRequest)
	}
	if limit == 0 {
		limit = qq.q.Limit
	}
	if limit == 0 {
		limit = r.opts.DefaultLimit
	}
	limit = min(limit, r.opts.MaxLimit)
	// A bounded counter in one row is one Get of a row of fixed size; other
	// counters sum bucket rows (and exact ones their contributions).
	if qq.q.Shape == schema.ShapeGet && (qq.t.Role != schema.RoleCounter || qq.t.Counter.Bounded() && qq.t.Counter.Buckets == 1) {
		return r.get(ctx, qq, vals, req)
	}
	return r.scan(ctx, qq, vals, limit, req)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
