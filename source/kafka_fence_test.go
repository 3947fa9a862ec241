package source

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fenceChild, when set, makes TestKafkaHoldEndsWithTheSession the member
// it stops: the URL to join with.
const fenceChild = "DENORM_TEST_FENCE_MEMBER"

// A member paused for longer than its session, holding a batch, finds its
// hold ended when it resumes, before it can write: another member has its
// partition by then. The paused member is a process of its own, stopped
// with SIGSTOP as a long pause stops one (its franz-go heartbeats stop
// with it); its session is the broker's least, 6 s.
func TestKafkaHoldEndsWithTheSession(t *testing.T) {
	if u := os.Getenv(fenceChild); u != "" {
		fenceMember(t, u)
		return
	}
	lines := make([]string, 20)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"entity":"order","key":"o%d","version":1}`, i)
	}
	u := kafkaTopic(t, 1, lines)
	u.SessionTimeout = 6 * time.Second

	cmd := exec.Command(os.Args[0], "-test.run", "^TestKafkaHoldEndsWithTheSession$", "-test.v")
	cmd.Env = append(os.Environ(), fenceChild+"="+u.String())
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	out := bufio.NewScanner(outPipe)
	answer := func() string {
		t.Helper()
		for out.Scan() {
			if line, ok := strings.CutPrefix(out.Text(), "fence: "); ok {
				return line
			}
		}
		t.Fatalf("the member ended without answering: %v", out.Err())
		return ""
	}
	got1 := answer()
	t.Logf("the member, in its session: %s", got1)
	if !strings.HasPrefix(got1, "held") {
		t.Fatalf("the member holding a batch in a live session: %q, want a hold", got1)
	}

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b := openKafka(t, u)
	defer b.Close()
	start := time.Now()
	got := readAtLeast(t, b, 1, 5)
	t.Logf("the other member read %d records %s after the pause began", len(got), time.Since(start).Round(time.Millisecond))
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintln(in, "hold"); err != nil {
		t.Fatal(err)
	}
	got2 := answer()
	t.Logf("the member, resumed: %s", got2)
	if !strings.HasPrefix(got2, "fenced") {
		t.Fatalf("the member resumed after another took its partition: %q, want fenced", got2)
	}
}

// fenceMember joins the group, takes a batch and holds it uncommitted,
// says whether it may write, then says it again after each line on stdin.
func fenceMember(t *testing.T, url string) {
	u, err := ParseKafkaURL(url)
	if err != nil {
		t.Fatal(err)
	}
	k := openKafka(t, u)
	defer k.Close()
	readAtLeast(t, k, 1, 5)
	say := func() {
		until, err := k.Hold(context.Background())
		if err != nil {
			fmt.Printf("fence: fenced: %v\n", err)
			return
		}
		fmt.Printf("fence: held until %s (%s from now)\n", until.Format(time.RFC3339Nano), time.Until(until).Round(time.Millisecond))
	}
	say()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		say()
	}
}

// While a rebalance waits for the batch in hand, a hold ends at half the
// rebalance timeout after the member first heard of it, and past that
// Hold refuses; a rebalance heard of in another generation caps nothing.
func TestKafkaHoldCappedByRebalance(t *testing.T) {
	k := &Kafka{group: "g", rebalanceTimeout: time.Minute}
	now := time.Now()
	far := now.Add(time.Hour)
	if got, err := k.capped(3, far); err != nil || !got.Equal(far) {
		t.Fatalf("no rebalance: %v, %v; want %v", got, err, far)
	}
	k.noteRebalanceAt(now.Add(-10*time.Second), 3)
	k.noteRebalanceAt(now, 3) // later news of the same rebalance changes nothing
	if got, err := k.capped(3, far); err != nil || !got.Equal(now.Add(20*time.Second)) {
		t.Fatalf("rebalance heard 10 s ago: %v, %v; want %v", got, err, now.Add(20*time.Second))
	}
	if got, err := k.capped(4, far); err != nil || !got.Equal(far) {
		t.Fatalf("a rebalance of generation 3 capped a hold of generation 4: %v, %v", got, err)
	}
	k.noteRebalanceAt(now.Add(-31*time.Second), 3)
	if got, err := k.capped(3, far); err == nil {
		t.Fatalf("rebalance heard 31 s ago, half a 60 s timeout passed: hold until %v, want an error", got)
	}
}
