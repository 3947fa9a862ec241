package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/denorm/denorm/source"
)

// fakeKafka stands for the Kafka source: partitions held, fetch lag, and a
// log of records Next hands out.
type fakeKafka struct {
	mu       sync.Mutex
	assigned []int32
	lag      int64
	recs     int
}

func (f *fakeKafka) Lag() int64 { f.mu.Lock(); defer f.mu.Unlock(); return f.lag }
func (f *fakeKafka) Assigned() []int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int32(nil), f.assigned...)
}
func (f *fakeKafka) Next(_ context.Context, n int) ([]source.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recs == 0 {
		return nil, io.EOF
	}
	k := min(n, f.recs)
	f.recs -= k
	return make([]source.Record, k), nil
}
func (f *fakeKafka) Commit(context.Context) error { return nil }

func gauge(t *testing.T, m *sinkMetrics, name string) float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && f.GetType() == dto.MetricType_GAUGE {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// /readyz is 503 until the group assigns partitions, 200 while it holds
// some, and 503 again once a signal has come.
func TestSinkReadiness(t *testing.T) {
	src := &fakeKafka{}
	m := newSinkMetrics(src)
	srv := httptest.NewServer(m.routes())
	defer srv.Close()
	ready := func() (int, string) {
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := ready(); code != http.StatusServiceUnavailable || !strings.Contains(body, "no partitions") {
		t.Errorf("before assignment: %d %q", code, body)
	}
	src.mu.Lock()
	src.assigned = []int32{0, 3}
	src.mu.Unlock()
	if code, body := ready(); code != http.StatusOK || !strings.Contains(body, "2 partitions") {
		t.Errorf("with two partitions: %d %q", code, body)
	}
	m.stopping.Store(true)
	if code, body := ready(); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopping") {
		t.Errorf("after a signal: %d %q", code, body)
	}
}

// The consumer lag counts the batch in hand until it is committed: a sink
// that has read everything but applied nothing does not report 0.
func TestSinkLagAgainstCommitted(t *testing.T) {
	src := &fakeKafka{lag: 7, recs: 40}
	m := newSinkMetrics(src)
	ts := m.timed(src)
	ctx := context.Background()
	if got := gauge(t, m, "denorm_sink_consumer_lag"); got != 7 {
		t.Fatalf("lag before any read: %v, want 7", got)
	}
	if _, err := ts.Next(ctx, 25); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Next(ctx, 25); err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	src.lag = 0 // everything fetched
	src.mu.Unlock()
	if got, fetch := gauge(t, m, "denorm_sink_consumer_lag"), gauge(t, m, "denorm_sink_fetch_lag"); got != 40 || fetch != 0 {
		t.Fatalf("40 records in hand: consumer lag %v (want 40), fetch lag %v (want 0)", got, fetch)
	}
	if err := ts.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, m, "denorm_sink_consumer_lag"); got != 0 {
		t.Fatalf("after commit: %v, want 0", got)
	}
}
