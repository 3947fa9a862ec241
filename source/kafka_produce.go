package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceLines produces every non-blank line of r to the URL's topic,
// creating the topic first (with the URL's partition count) when missing,
// and returns how many it produced once all are acknowledged.
//
// Each record is keyed by its event's entity and key, so Kafka sends all
// events of one entity to one partition and keeps them in order: the
// order a sink must apply them in. A line that is not an event gets no
// key and lands anywhere; the sink sends it to the dead letter.
func ProduceLines(ctx context.Context, u KafkaURL, r io.Reader) (int, error) {
	if err := EnsureKafkaTopic(ctx, u); err != nil {
		return 0, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(u.Brokers...), kgo.DefaultProduceTopic(u.Topic))
	if err != nil {
		return 0, fmt.Errorf("source: kafka client for %s: %w", u, err)
	}
	defer cl.Close()
	var (
		mu   sync.Mutex
		perr error
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec := &kgo.Record{Key: EventKey(line), Value: bytes.Clone(line)}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				perr = errors.Join(perr, err)
				mu.Unlock()
			}
		})
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("source: read events to produce: %w", err)
	}
	if err := cl.Flush(ctx); err != nil {
		return n, fmt.Errorf("source: flush to %s: %w", u.Topic, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if perr != nil {
		return n, fmt.Errorf("source: produce to %s: %w", u.Topic, perr)
	}
	return n, nil
}

// EventKey is the Kafka key of an event line: its entity and key, as
// `entity/key` with the key in compact JSON, or nil when the line is not
// an event with both.
func EventKey(line []byte) []byte {
	var ev struct {
		Entity string          `json:"entity"`
		Key    json.RawMessage `json:"key"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Entity == "" || len(ev.Key) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(ev.Entity)
	b.WriteByte('/')
	if json.Compact(&b, ev.Key) != nil {
		return nil
	}
	return b.Bytes()
}
