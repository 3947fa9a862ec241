package testenv

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// KafkaURL is the test environment's Kafka broker as a denorm URL without
// a topic (DENORM_KAFKA_URL, e.g. kafka://127.0.0.1:9092).
func KafkaURL(tb testing.TB) string {
	tb.Helper()
	return strings.TrimRight(need(tb, "DENORM_KAFKA_URL", "Kafka"), "/")
}

// KafkaTopic is a topic name of the test's own on the test environment's
// broker, new on every run, so that tests and runs never read each
// other's events. tag says whose, in the broker's topic list.
func KafkaTopic(tb testing.TB, tag string) string {
	tb.Helper()
	return fmt.Sprintf("%s-%x", tag, rand.Int63())
}
