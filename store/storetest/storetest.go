// Package storetest is the conformance suite every store.Store backend runs,
// in the manner of gocloud.dev's drivertest packages: a backend's test file
// builds a Harness and calls Run, and every semantic of HBase's data model
// that denorm relies on becomes one named subtest.
//
// The suite is written so that a real HBase, reached through its Thrift2
// gateway, passes it unchanged: each subtest creates its own uniquely named
// tables and drops them afterwards, timestamps are explicit wherever the
// result depends on them, and nothing is asserted that HBase leaves
// undefined (for example whether an older version resurfaces after the
// newest one is deleted, which on HBase depends on flush timing).
//
// A backend's test file runs it like this:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{
//			New: func(t *testing.T) store.Store {
//				st, err := Open(...) // a store of its own, closed by t.Cleanup
//				...
//			},
//			MaxCellSize: 1 << 20, MaxRowSize: 4 << 20, // the limits it was opened with
//			RegionCounts: true,
//		})
//	}
//
// A failing randomized subtest logs its seed; DENORM_STORETEST_SEED=<seed>
// replays it.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// Harness tells the suite how to make stores of one backend and what the
// backend can do.
type Harness struct {
	// New returns a store for one subtest. Tables the suite creates are
	// unique to the subtest, so New may return a connection to a shared
	// server. New registers whatever cleanup the store needs (including
	// Close) with t.Cleanup; the suite drops its tables before that runs.
	// The ClosedStore subtest calls New a second time and closes that store
	// itself, so each call must return a store of its own (on a shared
	// server, a client of its own).
	New func(t *testing.T) store.Store

	// MaxCellSize and MaxRowSize are the limits the store was opened with;
	// 0 means HBase's defaults (store.DefaultMaxCellSize and
	// store.DefaultMaxRowSize). Limit subtests are skipped when the limit is
	// over MaxTestableLimit, since proving it would move too many bytes.
	MaxCellSize int
	MaxRowSize  int

	// RegionCounts says the backend reports per-region read and write
	// request counts that move as soon as a request is served. HBase's
	// counts come from /jmx, which Thrift cannot reach, so its harness
	// leaves this false.
	RegionCounts bool

	// NoSettings marks a store that keeps none of the table and family
	// settings beyond versions and TTL (MIN_VERSIONS, a table's max row
	// size, MOB): the suite's own model store, a test double. Every
	// backend leaves it false, and the settings subtests check it.
	NoSettings bool

	// AwaitCompaction, when set, waits for a major compaction that
	// MajorCompact only requested (HBase) to finish. When nil, MajorCompact
	// is taken to be complete when it returns.
	AwaitCompaction func(ctx context.Context, st store.Store, table string) error

	// Seed seeds the randomized subtests; 0 means a fixed default. The
	// environment variable DENORM_STORETEST_SEED overrides it, to replay a
	// failure whose seed the suite logged.
	Seed int64
}

// MaxTestableLimit is the largest cell or row limit the suite will prove by
// writing past it.
const MaxTestableLimit = 64 << 20

const defaultSeed = 20261130

// Run runs every conformance subtest against the harness.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("storetest: Harness.New is nil")
	}
	if h.MaxCellSize <= 0 {
		h.MaxCellSize = store.DefaultMaxCellSize
	}
	if h.MaxRowSize <= 0 {
		h.MaxRowSize = store.DefaultMaxRowSize
	}
	if s := os.Getenv("DENORM_STORETEST_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("storetest: DENORM_STORETEST_SEED=%q is not an integer: %v", s, err)
		}
		h.Seed = v
	}
	if h.Seed == 0 {
		h.Seed = defaultSeed
	}
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newEnv(t, h))
		})
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, e *env)
}

// suite lists the subtests in the order they run; each file adds its own
// through its table.
var suite = concat(
	adminTests,
	rowTests,
	scanTests,
	getTests,
	getManyTests,
	wideTests,
	versionTests,
	deleteTests,
	familyTests,
	settingsTests,
	atomicTests,
	batchTests,
	counterTests,
	bufferedTests,
	limitTests,
	regionTests,
	durabilityTests,
	modelTests,
	closedTests,
)

func concat(lists ...[]testCase) []testCase {
	var out []testCase
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// env is what one subtest works with: its store and the harness facts.
type env struct {
	t   *testing.T
	h   Harness
	st  store.Store
	ctx context.Context
}

func newEnv(t *testing.T, h Harness) *env {
	st := h.New(t)
	if st == nil {
		t.Fatal("storetest: Harness.New returned a nil store")
	}
	return &env{t: t, h: h, st: st, ctx: t.Context()}
}

// tableName returns a name unique to this subtest and this run, so that
// runs against a shared HBase never collide, even with leftovers of a run
// that crashed before dropping its tables.
func (e *env) tableName() string {
	e.t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		e.t.Fatalf("random table suffix: %v", err)
	}
	base := e.t.Name()
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	var sb strings.Builder
	for _, c := range base {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			sb.WriteRune(c)
		default:
			sb.WriteByte('_')
		}
		if sb.Len() >= 24 {
			break
		}
	}
	return "st_" + sb.String() + "_" + hex.EncodeToString(b[:])
}

// create makes a table from spec under a fresh name (spec.Name is ignored)
// and drops it when the subtest ends.
func (e *env) create(spec store.TableSpec) string {
	e.t.Helper()
	spec.Name = e.tableName()
	if err := e.st.CreateTable(e.ctx, spec); err != nil {
		e.t.Fatalf("CreateTable(%s): %v", spec.Name, err)
	}
	e.dropAtEnd(spec.Name)
	return spec.Name
}

func (e *env) dropAtEnd(name string) {
	e.t.Cleanup(func() {
		// The subtest's context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.st.DropTable(ctx, name); err != nil && !errors.Is(err, store.ErrTableNotFound) {
			e.t.Errorf("drop table %s at the end of the subtest: %v", name, err)
		}
	})
}

// simple makes a table with the given families, each keeping versions
// versions.
func (e *env) simple(versions int, families ...string) string {
	e.t.Helper()
	spec := store.TableSpec{}
	for _, f := range families {
		spec.Families = append(spec.Families, store.FamilySpec{Name: f, MaxVersions: versions})
	}
	return e.create(spec)
}

func (e *env) mutate(table string, m store.RowMutation) {
	e.t.Helper()
	if err := e.st.Mutate(e.ctx, table, m); err != nil {
		e.t.Fatalf("Mutate(%s, row %s): %v", table, store.Printable(m.Row), err)
	}
}

func (e *env) put(table, row, family, qualifier string, ts int64, value string) {
	e.t.Helper()
	e.mutate(table, store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
		{Kind: store.Put, Family: family, Qualifier: []byte(qualifier), Timestamp: ts, Value: []byte(value)},
	}})
}

func (e *env) del(table, row string, kind store.Kind, family, qualifier string, ts int64) {
	e.t.Helper()
	e.mutate(table, store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
		{Kind: kind, Family: family, Qualifier: []byte(qualifier), Timestamp: ts},
	}})
}

func (e *env) get(table string, g store.Get) store.Row {
	e.t.Helper()
	r, err := e.st.Get(e.ctx, table, g)
	if err != nil {
		e.t.Fatalf("Get(%s, row %s): %v", table, store.Printable(g.Row), err)
	}
	if !r.Empty() && string(r.Key) != string(g.Row) {
		e.t.Errorf("Get(%s, row %s) returned row key %s", table, store.Printable(g.Row), store.Printable(r.Key))
	}
	checkRowShape(e.t, r)
	return r
}

// scan reads a whole scan into memory.
func (e *env) scan(table string, s store.Scan) []store.Row {
	e.t.Helper()
	rows, err := scanAll(e.ctx, e.st, table, s)
	if err != nil {
		e.t.Fatalf("Scan(%s, %s): %v", table, describeScan(s), err)
	}
	for _, r := range rows {
		checkRowShape(e.t, r)
	}
	return rows
}

func scanAll(ctx context.Context, st store.Store, table string, s store.Scan) ([]store.Row, error) {
	sc, err := st.Scan(ctx, table, s)
	if err != nil {
		return nil, err
	}
	var rows []store.Row
	for sc.Next(ctx) {
		r := sc.Row()
		// Row is valid only until the next call to Next.
		rows = append(rows, cloneRow(r))
	}
	err = sc.Err()
	if cerr := sc.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close scanner: %w", cerr)
	}
	return rows, err
}

// compact runs a major compaction and waits for it; backends that cannot
// compact skip the subtest.
func (e *env) compact(table string) {
	e.t.Helper()
	if !e.tryCompact(table) {
		e.t.SkipNow()
	}
}

// tryCompact runs a major compaction and waits for it, and reports false
// (with a log line) when the backend cannot compact, for subtests that have
// more to check without it.
func (e *env) tryCompact(table string) bool {
	e.t.Helper()
	err := e.st.MajorCompact(e.ctx, table)
	if errors.Is(err, store.ErrUnsupported) {
		e.t.Logf("no major compaction: %v", err)
		return false
	}
	if err != nil {
		e.t.Fatalf("MajorCompact(%s): %v", table, err)
	}
	if e.h.AwaitCompaction != nil {
		if err := e.h.AwaitCompaction(e.ctx, e.st, table); err != nil {
			e.t.Fatalf("await major compaction of %s: %v", table, err)
		}
	}
	return true
}

// nowMillis is the wall clock in HBase's unit.
func nowMillis() int64 { return time.Now().UnixMilli() }

// col names one column of a family.
func col(family, qualifier string) store.Column {
	return store.Column{Family: family, Qualifier: []byte(qualifier)}
}

// fam names a whole family.
func fam(family string) store.Column { return store.Column{Family: family} }

func describeScan(s store.Scan) string {
	var parts []string
	parts = append(parts, "start="+store.Printable(s.Start), "stop="+store.Printable(s.Stop))
	if s.Reverse {
		parts = append(parts, "reverse")
	}
	if s.Limit > 0 {
		parts = append(parts, "limit="+strconv.Itoa(s.Limit))
	}
	if s.Batch > 0 {
		parts = append(parts, "batch="+strconv.Itoa(s.Batch))
	}
	if s.MaxVersions > 0 {
		parts = append(parts, "versions="+strconv.Itoa(s.MaxVersions))
	}
	if len(s.Columns) > 0 {
		parts = append(parts, "columns="+columnsString(s.Columns))
	}
	if s.TimeRange != (store.TimeRange{}) {
		parts = append(parts, fmt.Sprintf("time=[%d,%d)", s.TimeRange.Min, s.TimeRange.Max))
	}
	return strings.Join(parts, " ")
}

func columnsString(cols []store.Column) string {
	var parts []string
	for _, c := range cols {
		if c.Qualifier == nil {
			parts = append(parts, c.Family)
		} else {
			parts = append(parts, c.Family+":"+store.Printable(c.Qualifier))
		}
	}
	return strings.Join(parts, ",")
}
