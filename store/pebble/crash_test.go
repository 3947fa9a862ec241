package pebble

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// The crash test runs this test binary again as a child that writes rows
// with SyncWAL and prints the number of every row whose Mutate returned. The
// parent kills it with SIGKILL at a random moment, reopens the store and
// checks that every acknowledged row is there and no row is torn.
const (
	crashChildEnv = "DENORM_PEBBLE_CRASH_CHILD"
	crashDirEnv   = "DENORM_PEBBLE_CRASH_DIR"
	crashStartEnv = "DENORM_PEBBLE_CRASH_START"
	crashTable    = "crash"
	crashRounds   = 5
)

var crashSpec = store.TableSpec{Name: crashTable, Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}}

func crashRowKey(n int) []byte { return []byte(fmt.Sprintf("r%09d", n)) }

// crashMutation is row n: three cells in each of two families, every value
// derived from n so that a reader can tell a whole row from a torn one.
func crashMutation(n int) store.RowMutation {
	m := store.RowMutation{Row: crashRowKey(n), Durability: store.SyncWAL}
	for _, f := range []string{"a", "b"} {
		for q := 0; q < 3; q++ {
			m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: f,
				Qualifier: []byte{'q', byte('0' + q)}, Timestamp: int64(n + 1),
				Value: []byte(fmt.Sprintf("%s%d-%d-%s", f, q, n, strings.Repeat("x", n%50)))})
		}
	}
	return m
}

// TestCrashChild is the child's body; it does nothing in an ordinary run.
func TestCrashChild(t *testing.T) {
	if os.Getenv(crashChildEnv) != "1" {
		t.Skip("runs only as the child of TestCrashRecovery")
	}
	ctx := context.Background()
	start, err := strconv.Atoi(os.Getenv(crashStartEnv))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, os.Getenv(crashDirEnv), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTable(ctx, crashSpec); err != nil && !isExists(err) {
		t.Fatal(err)
	}
	for n := start; ; n++ {
		if err := st.Mutate(ctx, crashTable, crashMutation(n)); err != nil {
			t.Fatal(err)
		}
		// os.Stdout is unbuffered: once Write returns, the line is in the
		// pipe, and the parent will read it even after the kill.
		fmt.Fprintf(os.Stdout, "ack %d\n", n)
	}
}

func isExists(err error) bool { return errors.Is(err, store.ErrTableExists) }

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(42, 1))
	acked := map[int]bool{}
	for round := 0; round < crashRounds; round++ {
		start := round * 1_000_000
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"=1", crashDirEnv+"="+dir, crashStartEnv+"="+strconv.Itoa(start))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random number of acknowledgements, so that the kill
		// lands while writes are in flight, not before the store is open.
		killAfter := 5 + rng.IntN(300)
		sc := bufio.NewScanner(out)
		n, killed := 0, false
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "ack ") {
				continue
			}
			v, err := strconv.Atoi(strings.TrimPrefix(line, "ack "))
			if err != nil {
				t.Fatalf("child printed %q", line)
			}
			acked[v] = true
			n++
			if n == killAfter && !killed {
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: child exited before it was killed: %v", round, err)
		}
		t.Logf("round %d: killed after %d acknowledged rows (%d acknowledged in all)", round, n, len(acked))
		checkCrashStore(t, dir, acked)
	}
}

func checkCrashStore(t *testing.T, dir string, acked map[int]bool) {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer st.Close()
	sc, err := st.Scan(ctx, crashTable, store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	present := map[int]bool{}
	for sc.Next(ctx) {
		r := sc.Row()
		n, err := strconv.Atoi(strings.TrimPrefix(string(r.Key), "r"))
		if err != nil {
			t.Fatalf("unexpected row %q", r.Key)
		}
		want := crashMutation(n)
		if len(r.Cells) != len(want.Mutations) {
			t.Fatalf("row %d is torn: %d of %d cells", n, len(r.Cells), len(want.Mutations))
		}
		for i, c := range r.Cells {
			w := want.Mutations[i]
			if c.Family != w.Family || string(c.Qualifier) != string(w.Qualifier) || string(c.Value) != string(w.Value) || c.Timestamp != w.Timestamp {
				t.Fatalf("row %d cell %d is %s:%s@%d=%q, want %s:%s@%d=%q", n, i, c.Family, c.Qualifier, c.Timestamp, c.Value,
					w.Family, w.Qualifier, w.Timestamp, w.Value)
			}
		}
		present[n] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for n := range acked {
		if !present[n] {
			t.Fatalf("acknowledged row %d is missing after the kill", n)
		}
	}
}
