// Package testenv tells tests where the real services of the test
// environment (testenv/*.sh, started by `make test`) listen. A test that
// needs one skips without it, except under CI (CI=true), which must never
// skip such a test silently.
package testenv

import (
	"os"
	"testing"
)

// HBaseURL is the Thrift2 gateway of the test environment's HBase
// (DENORM_HBASE_URL, e.g. hbase://127.0.0.1:9090).
func HBaseURL(tb testing.TB) string {
	tb.Helper()
	return need(tb, "DENORM_HBASE_URL", "HBase")
}

// HBaseJMX is the region server's /jmx endpoint (DENORM_HBASE_JMX).
func HBaseJMX(tb testing.TB) string {
	tb.Helper()
	return need(tb, "DENORM_HBASE_JMX", "HBase's /jmx")
}

func need(tb testing.TB, name, what string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: CI must run the tests against real %s (make test starts it)", name, what)
		}
		tb.Skipf("%s is not set: skipping a test against real %s (make test or make testenv-up starts it)", name, what)
	}
	return v
}
