package source_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// benchSinkEvents is the stream both sides apply: the writer benchmark's
// 20,000 generated orders (seed 1).
const benchSinkEvents = 20000

// BenchmarkSinkKafka applies the same events from a real Kafka topic (four
// partitions, one consumer group member) and from a JSON-lines file, each
// into a fresh embedded store (sync_wal, batches of 1,000) through the
// writer's loop, as `denorm sink` and `denorm apply` do. Needs the test
// environment's broker (DENORM_KAFKA_URL); skips without it.
func BenchmarkSinkKafka(b *testing.B) {
	kafka := testenv.KafkaURL(b)
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: benchSinkEvents, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	events := buf.Bytes()
	total := bytes.Count(events, []byte("\n"))
	file := filepath.Join(b.TempDir(), "orders.jsonl")
	if err := os.WriteFile(file, events, 0o644); err != nil {
		b.Fatal(err)
	}
	topic, err := source.ParseKafkaURL(fmt.Sprintf("%s/%s?partitions=4", kafka, testenv.KafkaTopic(b, "denorm-bench")))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := source.ProduceLines(ctx, topic, bytes.NewReader(events)); err != nil {
		b.Fatal(err)
	}
	plan, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		b.Fatal(err)
	}

	// kafka-fenced is as `denorm sink` runs: the source fences the writer
	// (Kafka.Hold before every write call).
	for _, fenced := range []bool{false, true} {
		name := "kafka"
		if fenced {
			name = "kafka-fenced"
		}
		b.Run(name, func(b *testing.B) {
			var spent time.Duration
			for b.Loop() {
				u := topic
				u.Group = testenv.KafkaTopic(b, "bench") // a new group reads from the start
				k, err := source.OpenKafka(ctx, source.KafkaOptions{URL: u})
				if err != nil {
					b.Fatal(err)
				}
				var fence write.Fence
				if fenced {
					fence = k
				}
				spent += applyAll(b, plan, &stopAfter{Kafka: k, left: total}, fence, total)
				k.Close()
			}
			b.ReportMetric(float64(total*b.N)/spent.Seconds(), "events/s")
		})
	}
	b.Run("file", func(b *testing.B) {
		var spent time.Duration
		for b.Loop() {
			f, err := source.OpenFile(file, source.FileOptions{FromStart: true, OffsetPath: filepath.Join(b.TempDir(), "offset")})
			if err != nil {
				b.Fatal(err)
			}
			spent += applyAll(b, plan, f, nil, total)
			f.Close()
		}
		b.ReportMetric(float64(total*b.N)/spent.Seconds(), "events/s")
	})
}

// applyAll runs the writer's loop from src, fenced by fence when set, into
// a fresh embedded store and returns how long the loop took; the store's
// creation is not timed.
func applyAll(b *testing.B, plan *schema.Plan, src write.Source, fence write.Fence, want int) time.Duration {
	b.Helper()
	ctx := context.Background()
	b.StopTimer()
	st, err := pebble.Open(ctx, b.TempDir(), pebble.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		b.Fatal(err)
	}
	dl, err := source.OpenDeadLetterFile(filepath.Join(b.TempDir(), "dead.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer dl.Close()
	b.StartTimer()
	start := time.Now()
	stats, err := write.Run(ctx, write.New(plan, st, write.Options{Fence: fence}), src, dl, write.RunOptions{BatchSize: 1000})
	if err != nil {
		b.Fatal(err)
	}
	if stats.Events != want || stats.DeadLetters != 0 {
		b.Fatalf("applied %d events (%d dead letters), want %d", stats.Events, stats.DeadLetters, want)
	}
	return time.Since(start)
}

// stopAfter ends a Kafka source once it has returned n records, so that
// the loop ends at the end of the benchmark's stream.
type stopAfter struct {
	*source.Kafka
	left int
}

func (s *stopAfter) Next(ctx context.Context, max int) ([]source.Record, error) {
	recs, err := s.Kafka.Next(ctx, max)
	if s.left -= len(recs); s.left <= 0 {
		s.Stop()
	}
	return recs, err
}
