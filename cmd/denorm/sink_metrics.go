package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/write"
)

// sinkMetrics are the sink's Prometheus metrics, on a registry of its own
// (as serve's are) so that tests can run several sinks in one process.
type sinkMetrics struct {
	reg     *prometheus.Registry
	events  prometheus.Counter
	applied prometheus.Counter
	stale   prometheus.Counter
	cells   *prometheus.CounterVec
	deletes *prometheus.CounterVec
	dead    prometheus.Counter
	batches prometheus.Counter
	// counterRows: bounded counter rows written.
	counterRows prometheus.Counter
	latency     prometheus.Histogram

	mu   sync.Mutex
	prev write.Stats // the totals at the last progress call

	src sinkSource
	// inHand counts the records Next returned since the last successful
	// Commit: read, and not yet applied and committed.
	inHand atomic.Int64
	// stopping is set once a signal has come: the sink finishes its batch
	// and leaves, so it is no longer ready.
	stopping atomic.Bool
}

// sinkSource is what the metrics read of the Kafka source.
type sinkSource interface {
	Lag() int64
	Assigned() []int32
}

func newSinkMetrics(src sinkSource) *sinkMetrics {
	m := &sinkMetrics{
		src: src,
		reg: prometheus.NewRegistry(),
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "denorm_sink_events_total", Help: "Events read and committed, dead letters included.",
		}),
		applied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "denorm_sink_events_applied_total", Help: "Events whose state was written.",
		}),
		stale: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "denorm_sink_events_stale_total", Help: "Events older than the stored version of their entity (duplicates, reordering): skipped.",
		}),
		cells: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "denorm_sink_cells_written_total", Help: "Cells put, by table.",
		}, []string{"table"}),
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "denorm_sink_delete_markers_total", Help: "Delete markers written, by table.",
		}, []string{"table"}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "denorm_sink_dead_letters_total", Help: "Events sent to the dead letter.",
		}),
		counterRows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "denorm_sink_counter_rows_written_total", Help: "Bounded counter rows written (the part cells of the batch's streams, plain puts; rows where no count changed are not written).",
		}),
		batches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "denorm_sink_batches_total", Help: "Batches applied and committed.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "denorm_sink_batch_duration_seconds", Help: "From a batch read to its offsets committed.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
	}
	// Lag is counted against the committed offsets: records not read yet
	// plus those read and not yet committed, so that 0 means every record
	// of the held partitions is applied. The fetch lag alone reads 0 while
	// a whole batch is still being written.
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "denorm_sink_consumer_lag", Help: "Records of the assigned partitions not yet committed (not read, or read and not yet applied), as of the last fetch.",
	}, func() float64 { return float64(m.committedLag()) })
	fetchLag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "denorm_sink_fetch_lag", Help: "Records of the assigned partitions not read yet, as of the last fetch.",
	}, func() float64 { return float64(src.Lag()) })
	inHand := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "denorm_sink_records_in_hand", Help: "Records read and not yet committed: the batch being applied.",
	}, func() float64 { return float64(m.inHand.Load()) })
	parts := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "denorm_sink_assigned_partitions", Help: "Partitions this sink holds in its group.",
	}, func() float64 { return float64(len(src.Assigned())) })
	m.reg.MustRegister(m.events, m.applied, m.stale, m.cells, m.deletes, m.dead, m.counterRows, m.batches, m.latency, lag, fetchLag, inHand, parts,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

func (m *sinkMetrics) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	// Ready means the group has given this sink partitions to apply and it
	// is not shutting down: a member with none (more sinks than
	// partitions, or a rebalance under way) does no work.
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		n := len(m.src.Assigned())
		switch {
		case m.stopping.Load():
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "stopping")
		case n == 0:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "no partitions assigned")
		default:
			fmt.Fprintf(w, "ready: %d partitions\n", n)
		}
	})
	return mux
}

// committedLag is the fetch lag plus the records in hand.
func (m *sinkMetrics) committedLag() int64 { return m.src.Lag() + m.inHand.Load() }

// progress takes the run's totals after a committed batch and adds what
// changed since the last one.
func (m *sinkMetrics) progress(s write.Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events.Add(float64(s.Events - m.prev.Events))
	m.applied.Add(float64(s.Applied - m.prev.Applied))
	m.stale.Add(float64(s.Stale - m.prev.Stale))
	m.counterRows.Add(float64(s.Counted - m.prev.Counted))
	for t, n := range s.Cells {
		m.cells.WithLabelValues(t).Add(float64(n - m.prev.Cells[t]))
	}
	for t, n := range s.Deletes {
		m.deletes.WithLabelValues(t).Add(float64(n - m.prev.Deletes[t]))
	}
	m.batches.Inc()
	prev := write.Stats{Cells: map[string]int{}, Deletes: map[string]int{}}
	prev.Add(s)
	m.prev = prev
}

// timed measures each batch from the Next that returned it to its
// commit. A source that reads ahead stays one (write.Ahead), so that the
// writer still stages a batch while the last one is written.
func (m *sinkMetrics) timed(src write.Source) write.Source {
	t := &timedSource{Source: src, m: m}
	if ah, ok := src.(write.Ahead); ok {
		return &timedAhead{timedSource: t, ahead: ah}
	}
	return t
}

type timedSource struct {
	write.Source
	m     *sinkMetrics
	start time.Time
	// n counts the records Next returned since the last mark.
	n int64
}

// timedAhead is timedSource for a source that reads ahead: a mark carries
// its batch's records and start, and its commit takes them out of hand.
type timedAhead struct {
	*timedSource
	ahead write.Ahead
}

type timedMark struct {
	inner any
	n     int64
	start time.Time
}

func (t *timedAhead) Mark() any {
	m := timedMark{inner: t.ahead.Mark(), n: t.n, start: t.start}
	t.n, t.start = 0, time.Time{}
	return m
}

func (t *timedAhead) CommitMark(ctx context.Context, mark any) error {
	m, ok := mark.(timedMark)
	if !ok {
		return fmt.Errorf("sink: commit: %T is not a mark of the timed source", mark)
	}
	if err := t.ahead.CommitMark(ctx, m.inner); err != nil {
		return err
	}
	if !m.start.IsZero() {
		t.m.latency.Observe(time.Since(m.start).Seconds())
	}
	t.m.inHand.Add(-m.n)
	return nil
}

func (t *timedAhead) Ready() bool { return t.ahead.Ready() }

func (t *timedSource) Next(ctx context.Context, n int) ([]source.Record, error) {
	recs, err := t.Source.Next(ctx, n)
	if len(recs) > 0 && t.start.IsZero() {
		t.start = time.Now()
	}
	t.m.inHand.Add(int64(len(recs)))
	t.n += int64(len(recs))
	return recs, err
}

func (t *timedSource) Commit(ctx context.Context) error {
	err := t.Source.Commit(ctx)
	if err == nil {
		if !t.start.IsZero() {
			t.m.latency.Observe(time.Since(t.start).Seconds())
		}
		t.m.inHand.Store(0)
	}
	t.start, t.n = time.Time{}, 0
	return err
}

// counted counts dead letters as they are added.
func (m *sinkMetrics) counted(dl write.DeadLetters) write.DeadLetters {
	return &countedDL{DeadLetters: dl, m: m}
}

type countedDL struct {
	write.DeadLetters
	m *sinkMetrics
}

func (c *countedDL) Add(ctx context.Context, rec source.Record, reason error) error {
	err := c.DeadLetters.Add(ctx, rec, reason)
	if err == nil {
		c.m.dead.Inc()
	}
	return err
}
