package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnsureKafkaTopic creates the URL's topic with u.Partitions partitions
// (the broker's default when 0) unless it exists. A topic that exists is
// left as it is, whatever its partition count.
func EnsureKafkaTopic(ctx context.Context, u KafkaURL) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(u.Brokers...))
	if err != nil {
		return fmt.Errorf("source: kafka client for %s: %w", u, err)
	}
	defer cl.Close()
	parts := int32(-1)
	if u.Partitions > 0 {
		parts = int32(u.Partitions)
	}
	// -1 replicas: the broker's default replication factor.
	_, err = kadm.NewClient(cl).CreateTopic(ctx, parts, -1, nil, u.Topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("source: create topic %s: %w", u.Topic, err)
	}
	return nil
}

// KafkaGroupLag is how many records of the URL's topic the URL's group has
// not committed yet: per partition, the end offset minus the committed
// one (or minus the start of the log when the group committed nothing).
func KafkaGroupLag(ctx context.Context, u KafkaURL) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(u.Brokers...))
	if err != nil {
		return 0, fmt.Errorf("source: kafka client for %s: %w", u, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, u.Topic)
	if err != nil {
		return 0, fmt.Errorf("source: end offsets of %s: %w", u.Topic, err)
	}
	if err := ends.Error(); err != nil {
		return 0, fmt.Errorf("source: end offsets of %s: %w", u.Topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, u.Topic)
	if err != nil {
		return 0, fmt.Errorf("source: start offsets of %s: %w", u.Topic, err)
	}
	committed, err := adm.FetchOffsetsForTopics(ctx, u.Group, u.Topic)
	if err != nil {
		return 0, fmt.Errorf("source: committed offsets of group %s: %w", u.Group, err)
	}
	var lag int64
	ends.Each(func(e kadm.ListedOffset) {
		from := int64(0)
		if s, ok := starts.Lookup(e.Topic, e.Partition); ok {
			from = s.Offset
		}
		if c, ok := committed.Lookup(e.Topic, e.Partition); ok && c.Err == nil && c.At >= 0 {
			from = c.At
		}
		lag += max(0, e.Offset-from)
	})
	return lag, nil
}
