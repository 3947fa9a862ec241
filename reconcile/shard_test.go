package reconcile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/denorm/denorm/gen"
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

// failingScans is a store whose scans of one table fail.
type failingScans struct {
	store.Store
	table string
}

func (f failingScans) Scan(ctx context.Context, table string, s store.Scan) (store.Scanner, error) {
	if table == f.table {
		return nil, errors.New("injected scan failure")
	}
	return f.Store.Scan(ctx, table, s)
}

// A run interrupted after its primary pass resumes with the checksums it
// had: it derives no primary row again, and its ranges are equal.
func TestCheckpointResumesSums(t *testing.T) {
	ctx := context.Background()
	plan := loadPlan(t, false)
	st := openStore(t, plan)
	apply(t, ctx, write.New(plan, st, write.Options{}), genEvents(t, plan, gen.OrdersOptions{Events: 400, Seed: 5}))
	full := run(t, ctx, plan, st, Options{DryRun: true})
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if _, err := Run(ctx, plan, failingScans{st, "orders_by_sku"}, Options{DryRun: true, Checkpoint: ckpt}); err == nil {
		t.Fatal("the failing run succeeded")
	}
	if _, err := os.Stat(ckpt + ".sums"); err != nil {
		t.Fatalf("no checksums beside the checkpoint: %v", err)
	}
	rest := run(t, ctx, plan, st, Options{DryRun: true, Checkpoint: ckpt})
	if rest.Rows != full.Rows || rest.Differences() != 0 || rest.Ranges.Unequal != 0 {
		t.Fatalf("resumed run: %d rows (want %d), ranges %+v\n%s", rest.Rows, full.Rows, rest.Ranges, text(rest))
	}
	// The plan's sample and the derived scans read the primary table; the
	// primary pass did not run again.
	if got, want := rest.RowsRead["orders"], full.RowsRead["orders"]-full.Rows; got != want {
		t.Fatalf("the resumed run scanned %d primary rows, want %d (the sample only)", got, want)
	}
}
