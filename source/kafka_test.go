package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/denorm/denorm/internal/testenv"
)

// kafkaTopic makes a fresh topic with parts partitions on the test
// environment's broker, holding the lines given.
func kafkaTopic(t *testing.T, parts int, lines []string) KafkaURL {
	t.Helper()
	u, err := ParseKafkaURL(fmt.Sprintf("%s/%s?group=%s&partitions=%d", testenv.KafkaURL(t),
		testenv.KafkaTopic(t, "denorm-source"), testenv.KafkaTopic(t, "g"), parts))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := ProduceLines(ctx, u, strings.NewReader(strings.Join(lines, "\n")))
	if err != nil || n != len(lines) {
		t.Fatalf("produced %d of %d: %v", n, len(lines), err)
	}
	return u
}

func openKafka(t *testing.T, u KafkaURL) *Kafka {
	t.Helper()
	k, err := OpenKafka(context.Background(), KafkaOptions{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// readAtLeast reads until n records came, failing after a minute.
func readAtLeast(t *testing.T, k *Kafka, n, batch int) []Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []Record
	for len(out) < n {
		recs, err := k.Next(ctx, batch)
		if err != nil {
			t.Fatalf("after %d records: %v", len(out), err)
		}
		out = append(out, recs...)
	}
	return out
}

// Commit covers exactly what Next returned: a member that closes without
// committing leaves its records to the next one, and one that committed
// is not given them again. Events of one entity stay in order in one
// partition, and Where names topic, partition and offset.
func TestKafkaCommitCoversWhatWasReturned(t *testing.T) {
	var lines []string
	for i := range 60 {
		lines = append(lines, fmt.Sprintf(`{"entity":"order","key":"o%d","version":%d}`, i%6, i/6+1))
	}
	u := kafkaTopic(t, 3, lines)
	ctx := context.Background()

	k := openKafka(t, u)
	first := readAtLeast(t, k, 1, 7)
	if err := k.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if len(k.Assigned()) != 3 {
		t.Fatalf("one member holds %v, want all 3 partitions", k.Assigned())
	}
	uncommitted := readAtLeast(t, k, 1, 5)
	k.Close() // without committing the second batch

	k = openKafka(t, u)
	defer k.Close()
	rest := readAtLeast(t, k, len(lines)-len(first), 100)
	if err := k.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if len(first)+len(rest) != len(lines) {
		t.Fatalf("read %d then %d after a restart, want %d in all (nothing twice once committed)", len(first), len(rest), len(lines))
	}
	seen := map[string]bool{}
	for _, r := range rest {
		seen[r.Where] = true
	}
	for _, r := range uncommitted {
		if !seen[r.Where] {
			t.Fatalf("%s was returned, not committed, and not read again", r.Where)
		}
	}
	last := map[string]int{} // entity key -> last version seen
	for _, r := range append(first, rest...) {
		var ev struct {
			Key     string
			Version int
		}
		if err := json.Unmarshal(r.Data, &ev); err != nil {
			t.Fatalf("%q: %v", r.Data, err)
		}
		key, v := ev.Key, ev.Version
		if v < last[key] {
			t.Fatalf("%s: version %d of %s after version %d: one entity's events out of order", r.Where, v, key, last[key])
		}
		last[key] = v
		if !strings.HasPrefix(r.Where, u.Topic+"/") || !strings.HasSuffix(r.Where, fmt.Sprintf("@%d", r.Offset)) {
			t.Fatalf("where %q, offset %d", r.Where, r.Offset)
		}
	}
	lag, err := KafkaGroupLag(ctx, u)
	if err != nil || lag != 0 {
		t.Fatalf("group lag %d, %v; want 0 after committing everything", lag, err)
	}
}

// Stop ends a waiting Next with io.EOF.
func TestKafkaStop(t *testing.T) {
	u := kafkaTopic(t, 1, []string{`{"entity":"order","key":"o1","version":1}`})
	k := openKafka(t, u)
	defer k.Close()
	readAtLeast(t, k, 1, 10)
	if err := k.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		k.Stop()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if recs, err := k.Next(ctx, 10); !errors.Is(err, io.EOF) || len(recs) != 0 {
		t.Fatalf("after Stop: %d records, %v; want io.EOF", len(recs), err)
	}
}

// A dead letter on a topic carries the original bytes, the reason and
// where the event was.
func TestKafkaDeadLetters(t *testing.T) {
	u, err := ParseKafkaURL(testenv.KafkaURL(t) + "/" + testenv.KafkaTopic(t, "denorm-dead"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dl, err := OpenKafkaDeadLetters(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if err := dl.Add(ctx, Record{Data: []byte("not json\xff"), Offset: 17, Where: "t/2@17"}, errors.New("malformed JSON at byte 0")); err != nil {
		t.Fatal(err)
	}
	if err := dl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(u.Brokers...), kgo.ConsumeTopics(u.Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fs := cl.PollRecords(ctx, 10)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != "not json\xff" {
		t.Fatalf("dead letters %+v", recs)
	}
	h := map[string]string{}
	for _, x := range recs[0].Headers {
		h[x.Key] = string(x.Value)
	}
	if h[HeaderReason] != "malformed JSON at byte 0" || h[HeaderWhere] != "t/2@17" || h[HeaderOffset] != "17" {
		t.Fatalf("headers %v", h)
	}
}

func TestEventKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"entity":"order","key":"o1","version":3}`:    `order/"o1"`,
		`{"entity":"order","key": {"a": 1, "b": "x"}}`: `order/{"a":1,"b":"x"}`,
		`{"key":"o1"}`: ``,
		`not json`:     ``,
		`{"entity":"product","key":"sku1","state":{"x":[1]}}`: `product/"sku1"`,
	} {
		if got := string(EventKey([]byte(in))); got != want {
			t.Errorf("%s: key %q, want %q", in, got, want)
		}
	}
}

// A member that joins while another holds a batch gets no partition until
// that batch is committed, and then starts after it: across the handover
// every record is read once.
func TestKafkaRebalanceWaitsForTheBatchInHand(t *testing.T) {
	u, n := handoverTopic(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var r readOnce
	a := openKafka(t, u)
	defer a.Close()
	r.note(readAtLeast(t, a, 1, 50))

	b := openKafka(t, u)
	defer b.Close()
	bDone := r.consume(ctx, b, n)
	time.Sleep(2 * time.Second)
	if got := b.Assigned(); len(got) != 0 {
		t.Fatalf("the new member holds %v while the batch in hand is not committed", got)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r.drain(t, ctx, a, b, bDone, n, func() error { return a.Commit(ctx) })
}

// A member that reads ahead (two marks in hand) holds a joining member off
// until its last mark is committed: committing the first is not enough.
// While the newcomer waits, Ready says no, so that a writer stops reading
// ahead; after the handover every record is read once.
func TestKafkaMarksHoldRebalanceToTheLastCommit(t *testing.T) {
	u, n := handoverTopic(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var r readOnce
	a := openKafka(t, u)
	defer a.Close()
	r.note(readAtLeast(t, a, 1, 20))
	first := a.Mark()
	for !a.Ready() {
		if ctx.Err() != nil {
			t.Fatal("no records buffered after the first batch")
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.note(readAtLeast(t, a, 1, 20))
	second := a.Mark()

	b := openKafka(t, u)
	defer b.Close()
	bDone := r.consume(ctx, b, n)
	for a.Ready() {
		if ctx.Err() != nil {
			t.Fatal("a rebalance waits and Ready still says to read ahead")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := a.CommitMark(ctx, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if got := b.Assigned(); len(got) != 0 {
		t.Fatalf("the new member holds %v while a mark is not committed", got)
	}
	if err := a.CommitMark(ctx, second); err != nil {
		t.Fatal(err)
	}
	r.drain(t, ctx, a, b, bDone, n, func() error { return a.CommitMark(ctx, a.Mark()) })
}

// handoverTopic makes a topic of four partitions and n records for a
// handover between two members.
func handoverTopic(t *testing.T) (u KafkaURL, n int) {
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf(`{"entity":"order","key":"o%d","version":1}`, i))
	}
	return kafkaTopic(t, 4, lines), len(lines)
}

// readOnce records which records the members of a group read, to check
// that across a handover every record is read once.
type readOnce struct {
	mu   sync.Mutex
	seen map[string]int
}

func (r *readOnce) note(recs []Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	for _, rec := range recs {
		r.seen[rec.Where]++
	}
}

func (r *readOnce) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// consume reads with k, committing each batch, until n records are read
// between all members; its error arrives on the channel.
func (r *readOnce) consume(ctx context.Context, k *Kafka, n int) <-chan error {
	done := make(chan error, 1)
	go func() {
		for r.count() < n && ctx.Err() == nil {
			recs, err := k.Next(ctx, 50)
			if err != nil {
				done <- err
				return
			}
			r.note(recs)
			if err := k.Commit(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	return done
}

// drain reads with a until n records are read between all members,
// committing each batch with commit, then stops b (which consume runs)
// and checks that both ended up with partitions and every record was read
// once.
func (r *readOnce) drain(t *testing.T, ctx context.Context, a, b *Kafka, bDone <-chan error, n int, commit func() error) {
	t.Helper()
	for r.count() < n {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records read before the deadline", r.count(), n)
		}
		rctx, rcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		recs, err := a.Next(rctx, 50)
		rcancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		r.note(recs)
		if err := commit(); err != nil {
			t.Fatal(err)
		}
	}
	b.Stop()
	if err := <-bDone; err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if len(b.Assigned()) == 0 || len(a.Assigned()) == 0 {
		t.Fatalf("after the handover a holds %v and b %v; want both some", a.Assigned(), b.Assigned())
	}
	for where, k := range r.seen {
		if k != 1 {
			t.Fatalf("%s read %d times", where, k)
		}
	}
}
