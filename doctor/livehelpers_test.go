package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/store"
)

// liveHBase is the test environment's HBase for a live test: a store on
// its gateway (closed when the test ends), the gateway URL, the region
// server's /jmx URL and a context bounded by d. It skips outside CI when
// HBase is not running, like every test through internal/testenv.
type liveHBase struct {
	ctx context.Context
	st  store.Store
	url string
	jmx string
}

func openLive(t *testing.T, d time.Duration) *liveHBase {
	t.Helper()
	l := &liveHBase{url: testenv.HBaseURL(t), jmx: testenv.HBaseJMX(t)}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	l.ctx = ctx
	st, err := store.Open(ctx, l.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	l.st = st
	return l
}

// table creates a table named prefix_<nanoseconds> with these families and
// drops it when the test ends.
func (l *liveHBase) table(t *testing.T, prefix string, families ...string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	spec := store.TableSpec{Name: name}
	for _, f := range families {
		spec.Families = append(spec.Families, store.FamilySpec{Name: f})
	}
	if err := l.st.CreateTable(l.ctx, spec); err != nil {
		t.Fatal(err)
	}
	l.dropAtEnd(t, name)
	return name
}

// dropAtEnd drops a table when the test ends.
func (l *liveHBase) dropAtEnd(t *testing.T, name string) {
	t.Cleanup(func() {
		if err := l.st.DropTable(context.Background(), name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
}

// parseFile runs a parser on a test data file.
func parseFile[T any](t *testing.T, path string, parse func(io.Reader) ([]T, error)) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// batch writes rows into table and fails the test on any row's error.
func (l *liveHBase) batch(t *testing.T, table string, rows []store.RowMutation) {
	t.Helper()
	errs, err := l.st.Batch(l.ctx, table, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		if e != nil {
			t.Fatal(e)
		}
	}
}

// diagnoseUntil samples the region server's /jmx once a second and
// diagnoses it against before (taken at start) until done accepts the
// report, which it returns; after a minute the test fails, naming what it
// waited for. Counters reach /jmx with the server's periodic snapshot, so
// one sample is rarely enough.
func (l *liveHBase) diagnoseUntil(t *testing.T, client *http.Client, before *Snapshot, start time.Time, opts Options, what string, done func(Report) bool) Report {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		after, err := FetchJMX(l.ctx, client, l.jmx)
		if err != nil {
			t.Fatal(err)
		}
		rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: time.Since(start)}}}, opts)
		if done(rep) {
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute: %v", what, rep.Findings)
		}
	}
}
