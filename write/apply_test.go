package write

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

func genFile(t testing.TB, dir, name string, opts gen.OrdersOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := gen.Orders(&buf, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func applyFile(t testing.TB, st store.Store, path string) RunStats {
	t.Helper()
	ctx := context.Background()
	plan := ordersPlan(t)
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenFile(path, source.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dl, err := source.OpenDeadLetterFile(path + ".dead")
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	stats, err := Run(ctx, New(plan, st, Options{}), src, dl, RunOptions{BatchSize: 97})
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// A generated stream, clean or reordered and duplicated, ends in the same
// store, and the model agrees.
func TestGeneratedStreamConverges(t *testing.T) {
	dir := t.TempDir()
	opts := gen.OrdersOptions{Events: 3000, Seed: 42, Deletes: 0.02, Renames: 0.03}
	clean := genFile(t, dir, "clean.jsonl", opts)
	opts.Reorder, opts.Duplicate = 0.2, 0.1
	messy := genFile(t, dir, "messy.jsonl", opts)

	ctx := context.Background()
	var states []tableState
	for _, path := range []string{clean, messy} {
		st, err := pebble.Open(ctx, filepath.Join(dir, filepath.Base(path)+".db"), pebble.Options{Durability: store.AsyncWAL})
		if err != nil {
			t.Fatal(err)
		}
		stats := applyFile(t, st, path)
		if stats.DeadLetters != 0 {
			t.Fatalf("%s: %d dead letters", path, stats.DeadLetters)
		}
		states = append(states, readAll(t, ctx, st, ordersPlan(t)))
		st.Close()
	}
	if d := states[0].diff(states[1]); d != "" {
		t.Fatalf("clean and messy streams differ:\n%s", d)
	}
	if len(states[0]["orders"]) < 500 || len(states[0]["orders_by_status"]) != len(states[0]["orders"]) {
		t.Fatalf("%d orders, %d status rows", len(states[0]["orders"]), len(states[0]["orders_by_status"]))
	}
}

// Bad lines go to the dead letter with where and why; the rest is applied;
// a second run resumes after the committed offset and applies nothing new.
func TestDeadLettersAndResume(t *testing.T) {
	dir := t.TempDir()
	good := `{"entity":"order","key":"o1","version":1,"state":{"orderId":"o1","customerId":"c1","status":"OPEN","placedAt":1000,"items":[{"line":1,"sku":"s","quantity":2}]}}`
	huge := `{"entity":"order","key":"o3","version":1,"state":{"orderId":"o3","customerId":"c1","status":"` + strings.Repeat("x", 200) + `","placedAt":1000}}`
	lines := []string{
		good,
		`{"entity":"order","key":"o2"`, // malformed
		`{"entity":"order","version":1,"op":"delete"}`,                                           // no key
		`{"entity":"order","key":"o2","op":"delete"}`,                                            // no version
		`{"entity":"order","key":"o2","version":1,"state":{"orderId":"o2","totalCents":"many"}}`, // wrong type
		`{"entity":"ghost","key":"g","version":1,"op":"delete"}`,                                 // unknown entity
		huge, // a cell over the (test-sized) limit
		`{"entity":"order","key":"o9","version":2,"op":"delete"}`, // a delete without hints: the locator finds the row
		"",
		strings.Replace(good, `"o1"`, `"o4"`, 2),
	}
	path, st, plan := eventsAndStore(t, dir, strings.Join(lines, "\n"))
	ctx := context.Background()
	runOnce := func() RunStats {
		src, err := source.OpenFile(path, source.FileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dl, err := source.OpenDeadLetterFile(filepath.Join(dir, "dead.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer dl.Close()
		stats, err := Run(ctx, New(plan, st, Options{MaxCellSize: 100}), src, dl, RunOptions{BatchSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	stats := runOnce()
	if stats.DeadLetters != 6 || stats.Applied != 3 {
		t.Fatalf("dead letters %d applied %d, want 6 and 3", stats.DeadLetters, stats.Applied)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wantReasons := []string{"events.jsonl:2 malformed", "events.jsonl:3 key: missing", "events.jsonl:4 version: missing",
		"events.jsonl:5 state.totalCents", "events.jsonl:6 entity: unknown entity", "events.jsonl:7 cell too big"}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) != len(wantReasons) {
		t.Fatalf("dead letters:\n%s", b)
	}
	for i, g := range got {
		var dl source.DeadLetter
		if err := json.Unmarshal([]byte(g), &dl); err != nil {
			t.Fatal(err)
		}
		where, reason, _ := strings.Cut(wantReasons[i], " ")
		if dl.Where != where || !strings.Contains(dl.Reason, reason) || dl.Event != lines[dl.Line-1] {
			t.Fatalf("dead letter %d = %+v, want %s with %q", i, dl, where, reason)
		}
	}
	n := 0
	sc, _ := st.Scan(ctx, "orders", store.Scan{})
	for sc.Next(ctx) {
		n++
	}
	sc.Close()
	if n != 2 {
		t.Fatalf("%d orders stored, want 2", n)
	}
	again := runOnce()
	if again.Events != 0 || again.DeadLetters != 0 {
		t.Fatalf("second run read %d events, %d dead letters; want none (resume after the commit)", again.Events, again.DeadLetters)
	}
}

// failingCommit is a file source whose first commit fails: a process
// killed after its dead letters were made durable and before the offset
// moved.
type failingCommit struct {
	*source.File
	failed bool
}

func (f *failingCommit) Commit(ctx context.Context) error {
	if !f.failed {
		f.failed = true
		return errors.New("killed before the commit")
	}
	return f.File.Commit(ctx)
}

// CommitMark fails the same way: Run commits a file log by marks, reading
// the next batch before it commits the last.
func (f *failingCommit) CommitMark(ctx context.Context, mark any) error {
	if !f.failed {
		f.failed = true
		return errors.New("killed before the commit")
	}
	return f.File.CommitMark(ctx, mark)
}

// A run killed between writing its dead letters and committing replays the
// batch on resume; the dead letters it wrote are not written again.
func TestDeadLettersOnceAcrossAKill(t *testing.T) {
	dir := t.TempDir()
	good := `{"entity":"order","key":"o1","version":1,"state":{"orderId":"o1","customerId":"c1","status":"OPEN","placedAt":1000}}`
	lines := []string{good, `{"entity":"order"`, strings.Replace(good, "o1", "o2", 2), `not json`, strings.Replace(good, "o1", "o3", 2)}
	path, st, plan := eventsAndStore(t, dir, strings.Join(lines, "\n")+"\n")
	ctx := context.Background()
	dead := filepath.Join(dir, "dead.jsonl")
	runOnce := func(kill bool) (RunStats, error) {
		f, err := source.OpenFile(path, source.FileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var src Source = f
		if kill {
			src = &failingCommit{File: f}
		}
		dl, err := source.OpenDeadLetterFile(dead)
		if err != nil {
			t.Fatal(err)
		}
		defer dl.Close()
		return Run(ctx, New(plan, st, Options{}), src, dl, RunOptions{BatchSize: 10})
	}
	if _, err := runOnce(true); err == nil {
		t.Fatal("the killed run reported no error")
	}
	stats, err := runOnce(false)
	if err != nil {
		t.Fatal(err)
	}
	if stats.DeadLetters != 0 || stats.DeadLettersKnown != 2 {
		t.Fatalf("resumed run: %d dead letters written, %d known; want 0 and 2", stats.DeadLetters, stats.DeadLettersKnown)
	}
	b, err := os.ReadFile(dead)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Fatalf("%d dead letters in the file, want 2:\n%s", n, b)
	}
}

// eventsAndStore writes an events file in dir and opens an embedded store
// there with the orders tables, closed when the test ends.
func eventsAndStore(t *testing.T, dir, events string) (string, *pebble.Store, *schema.Plan) {
	t.Helper()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := pebble.Open(ctx, filepath.Join(dir, "db"), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	plan := ordersPlan(t)
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	return path, st, plan
}

// TestOnlyRefused: a batch is isolated (its refused events sent to the dead
// letter) only when everything that failed was the store refusing a
// mutation; a refusal beside any other failure fails the batch, to be
// retried whole.
func TestOnlyRefused(t *testing.T) {
	refused := &store.CellTooBigError{Table: "t", Row: []byte("r"), Family: "f", Size: 2, Limit: 1}
	other := errors.New("connection reset")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"a refusal", refused, true},
		{"a wrapped refusal", fmt.Errorf("write rows of t: %w", refused), true},
		{"two refusals", errors.Join(refused, &store.RowKeyError{Table: "t"}), true},
		{"a refusal and another failure", errors.Join(refused, other), false},
		{"the same, wrapped", fmt.Errorf("batch: %w", errors.Join(fmt.Errorf("rows: %w", refused), other)), false},
		{"another failure", other, false},
	} {
		if got := onlyRefused(c.err); got != c.want {
			t.Errorf("%s: onlyRefused(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
