package source

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers of a dead letter on a Kafka topic. The value is the original
// event, byte for byte, so the record can be fixed and produced again.
const (
	HeaderReason = "denorm-reason"
	HeaderWhere  = "denorm-where"
	HeaderOffset = "denorm-offset"
)

// KafkaDeadLetters produces refused events to a topic.
type KafkaDeadLetters struct {
	cl    *kgo.Client
	topic string

	mu  sync.Mutex
	err error // the first failed produce since the last Flush
	n   int
}

// OpenKafkaDeadLetters makes a producer for the URL's topic, creating the
// topic when it is missing.
func OpenKafkaDeadLetters(ctx context.Context, u KafkaURL) (*KafkaDeadLetters, error) {
	if err := EnsureKafkaTopic(ctx, u); err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(u.Brokers...), kgo.DefaultProduceTopic(u.Topic))
	if err != nil {
		return nil, fmt.Errorf("source: kafka client for dead letters to %s: %w", u, err)
	}
	return &KafkaDeadLetters{cl: cl, topic: u.Topic}, nil
}

// Add sends one refused event on its way; Flush waits for it.
func (d *KafkaDeadLetters) Add(ctx context.Context, rec Record, reason error) error {
	r := &kgo.Record{
		Topic: d.topic,
		Value: rec.Data,
		Headers: []kgo.RecordHeader{
			{Key: HeaderReason, Value: []byte(reason.Error())},
			{Key: HeaderWhere, Value: []byte(rec.Where)},
			{Key: HeaderOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
		},
	}
	// The client's context, not ctx: a dead letter accepted here must not
	// be dropped because the caller's context ends before Flush.
	d.cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
		if err != nil {
			d.mu.Lock()
			if d.err == nil {
				d.err = err
			}
			d.mu.Unlock()
		}
	})
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
	return nil
}

// Flush waits until every dead letter added so far is acknowledged by the
// broker: call it before committing the batch they came from.
func (d *KafkaDeadLetters) Flush(ctx context.Context) error {
	if err := d.cl.Flush(ctx); err != nil {
		return fmt.Errorf("source: flush dead letters to %s: %w", d.topic, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.err; err != nil {
		d.err = nil
		return fmt.Errorf("source: produce a dead letter to %s: %w", d.topic, err)
	}
	return nil
}

// Count is how many dead letters were added.
func (d *KafkaDeadLetters) Count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Close flushes and closes the producer.
func (d *KafkaDeadLetters) Close() error {
	err := d.Flush(context.Background())
	d.cl.Close()
	return err
}
