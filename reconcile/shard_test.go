package reconcile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

func TestParseShard(t *testing.T) {
	for _, s := range []string{"0/1", "1/2", "3/4"} {
		if _, err := ParseShard(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "1", "2/2", "-1/2", "0/0", "a/b", "1/2/3"} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func FuzzParseShard(f *testing.F) {
	f.Add("1/2")
	f.Add("0/0")
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err == nil && (sh.N < 1 || sh.I < 0 || sh.I >= sh.N) {
			t.Fatalf("%q gave %+v", s, sh)
		}
	})
}

// A run stopped part way resumes after the checkpoint's key: the two runs
// together scan every primary row once.
func TestCheckpointResume(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, false)
	st := openStore(t, plan)
	apply(t, ctx, write.New(plan, st, write.Options{}), genEvents(t, plan, gen.OrdersOptions{Events: 400, Seed: 5}))
	full := run(t, ctx, plan, st, Options{DryRun: true})
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	// An interrupted run: its checkpoint holds the key of the 50th row.
	sc, err := st.Scan(ctx, "orders", store.Scan{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var last []byte
	for sc.Next(ctx) {
		last = bytes.Clone(sc.Row().Key)
	}
	sc.Close()
	if err := writeCheckpoint(ckpt, "orders", last); err != nil {
		t.Fatal(err)
	}
	rest := run(t, ctx, plan, st, Options{DryRun: true, Checkpoint: ckpt})
	if rest.Rows != full.Rows-50 {
		t.Fatalf("resumed run scanned %d rows, want %d", rest.Rows, full.Rows-50)
	}
	if _, err := os.Stat(ckpt); !os.IsNotExist(err) {
		t.Fatalf("the checkpoint outlived a finished run: %v", err)
	}
	if again := run(t, ctx, plan, st, Options{DryRun: true, Checkpoint: ckpt}); again.Rows != full.Rows {
		t.Fatalf("a run after a finished one scanned %d rows, want %d", again.Rows, full.Rows)
	}
}

// failingScans is a store whose scans of one table fail after the first
// ok of them.
type failingScans struct {
	store.Store
	table string
	ok    int
	n     *atomic.Int64
}

func (f failingScans) Scan(ctx context.Context, table string, s store.Scan) (store.Scanner, error) {
	if table == f.table && f.n.Add(1) > int64(f.ok) {
		return nil, errors.New("injected scan failure")
	}
	return f.Store.Scan(ctx, table, s)
}

// A run interrupted after its primary pass resumes with the checksums it
// had: it derives no primary row again, and finds what the whole run finds.
func TestCheckpointResumesSums(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, false)
	st := openStore(t, plan)
	apply(t, ctx, write.New(plan, st, write.Options{}), genEvents(t, plan, gen.OrdersOptions{Events: 400, Seed: 5}))
	// One stale cell in an orders_by_sku row: the merge diffs its range,
	// scanning orders_by_sku a second time, after the primary pass.
	ents := primaries(t, ctx, st, plan)
	d, err := layout.DeriveCopies(plan, plan.Entity("order"), ents[len(ents)/2].state.Values)
	if err != nil {
		t.Fatal(err)
	}
	var row []byte
	for _, it := range d.Items {
		if it.Table == "orders_by_sku" {
			row = it.Row
		}
	}
	mutate(t, ctx, st, "orders_by_sku", row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("x"), Timestamp: 1, Value: []byte("junk")})
	full := run(t, ctx, plan, st, Options{DryRun: true})
	if full.Differences() != 1 || full.Ranges.Unequal != 1 {
		t.Fatalf("whole run: %d differences, ranges %+v, want 1 of each\n%s", full.Differences(), full.Ranges, text(full))
	}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if _, err := Run(ctx, plan, failingScans{st, "orders_by_sku", 1, new(atomic.Int64)}, Options{DryRun: true, Checkpoint: ckpt}); err == nil {
		t.Fatal("the failing run succeeded")
	}
	if _, err := os.Stat(ckpt + ".sums"); err != nil {
		t.Fatalf("no checksums beside the checkpoint: %v", err)
	}
	rest := run(t, ctx, plan, st, Options{DryRun: true, Checkpoint: ckpt})
	if rest.Rows != full.Rows || rest.Differences() != 1 || rest.Ranges != full.Ranges {
		t.Fatalf("resumed run: %d rows (want %d), %d differences, ranges %+v (want %+v)\n%s", rest.Rows, full.Rows, rest.Differences(), rest.Ranges, full.Ranges, text(rest))
	}
	// The primary pass did not run again: the primary table was read by
	// the diff's re-derivation only.
	if got, want := rest.RowsRead["orders"], full.RowsRead["orders"]-full.Rows; got != want {
		t.Fatalf("the resumed run scanned %d primary rows, want %d (the re-derivation only)", got, want)
	}
}
