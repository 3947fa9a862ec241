package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/write"
)

func newSinkCmd() *cobra.Command {
	var (
		schemaPath, from, deadPath, metricsAddr string
		batch                                   int
		grace                                   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "sink --schema S --from kafka://HOST:PORT/TOPIC?group=G [--store URL]",
		Short: "Apply change events from a Kafka topic until stopped",
		Long: `Read change events (JSON lines, see docs/events.md, one per Kafka record) from
a topic as a member of a consumer group, and apply each to the primary rows
and every copy the schema derives, as denorm apply does for a file. Missing
tables are created first. The sink runs until SIGTERM or Ctrl-C.

Offsets are committed only after the batch they cover is durably applied,
so a sink that is killed loses nothing: the next member of the group to hold
its partitions replays the uncommitted tail, and replays converge. Several
sinks in one group share the topic's partitions; all events of one entity
must share a key (denorm gen --to keys records by entity) so that they reach
one sink in order.

The URL: kafka://HOST:PORT[,HOST:PORT...]/TOPIC?group=G, with start=latest
to begin at the end of the topic when the group has no committed offsets
(the default is the earliest event), session_timeout=D, and instance=ID to
make each sink process a static member of the group: restarted with the
same id, it gets its partitions back at once (docs/kafka.md).

Events that cannot be applied go to the dead letter and the sink goes on:
by default the topic TOPIC.dead on the same brokers (the value is the
original event, headers denorm-reason, denorm-where, denorm-offset);
--dead-letter takes another kafka:// URL or a file path (JSON lines).

Logs are JSON lines on stderr: one per partition assignment and revoke,
and, when stderr is a terminal, progress every few seconds. With
--metrics-addr, Prometheus metrics are served on /metrics: events read and
applied, cells written by table, dead letters, consumer lag (against the
committed offsets: 0 means everything read is applied), assigned partitions
and batch latency; /healthz answers 200 while the sink runs, /readyz 200
once the group has assigned it partitions (503 before, and after SIGTERM).

SIGTERM or Ctrl-C: the batches in hand (the one being written and the next,
read ahead) are applied and committed, the group is left, the store closed,
and the exit code is 0. A sink that was paused past its session timeout
(a stopped process, a long pause) while holding a batch finds its
partitions gone when it resumes: it writes nothing more and stops with
exit code 1, "fenced off its streams", leaving the batch to the sink that
has them now (docs/kafka.md). Exit codes: 0 stopped by a signal; 1 the
store or Kafka failed, or the sink was fenced (run again to resume); 2 bad
usage, a bad URL or an unreadable schema.`,
		Example: `  denorm gen orders --events 10000 --to 'kafka://127.0.0.1:9092/orders?partitions=4'
  denorm sink --schema examples/orders.yaml --from 'kafka://127.0.0.1:9092/orders?group=denorm'
  denorm sink --schema examples/orders.yaml --from 'kafka://127.0.0.1:9092/orders?group=denorm' \
      --store hbase://127.0.0.1:9090 --metrics-addr 127.0.0.1:9464 --dead-letter dead.jsonl`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			// Signals are caught from the start: one that comes while the
			// sink is still connecting stops it cleanly, before any batch.
			sigCtx, stopSignals := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stopSignals()
			if schemaPath == "" || from == "" {
				return usageErrorf("--schema and --from are required")
			}
			if grace <= 0 {
				return usageErrorf("--shutdown-timeout must be positive")
			}
			if err := checkBatch(batch); err != nil {
				return err
			}
			u, err := source.ParseKafkaURL(from)
			if err != nil {
				return usageError(err)
			}
			if u.Group == "" {
				return usageErrorf("--from %s names no consumer group: add ?group=NAME", from)
			}
			if deadPath == "" {
				deadPath = source.KafkaURL{Brokers: u.Brokers, Topic: u.Topic + ".dead"}.String()
			}
			var deadURL source.KafkaURL
			if source.IsKafkaURL(deadPath) {
				if deadURL, err = source.ParseKafkaURL(deadPath); err != nil {
					return usageError(fmt.Errorf("--dead-letter: %w", err))
				}
				// Dead letters produced to the topic being consumed would
				// come back as events, for ever.
				if deadURL.Topic == u.Topic && sameBrokers(deadURL.Brokers, u.Brokers) {
					return usageErrorf("--dead-letter %s is the topic the sink reads: dead letters produced to it would be read back as events", deadPath)
				}
			}
			plan, err := loadSchema(schemaPath)
			if err != nil {
				return err
			}
			if err := write.Supports(plan); err != nil {
				return usageError(err)
			}
			lg := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
			var ln net.Listener
			if metricsAddr != "" {
				if ln, err = net.Listen("tcp", metricsAddr); err != nil {
					return usageError(fmt.Errorf("--metrics-addr %s: %w", metricsAddr, err))
				}
				defer ln.Close()
				if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
					lg.Warn("metrics listening beyond loopback: the server has no authentication", "addr", ln.Addr().String())
				}
			}

			ctx := cmd.Context()
			// A signal during start-up ends the command's context, so the
			// step in progress fails: that is a clean stop, not a failure.
			startErr := func(err error) error {
				if sigCtx.Err() != nil {
					lg.Info("stopped while starting", "err", err.Error())
					return nil
				}
				return err
			}
			st, err := openStore(cmd)
			if err != nil {
				return startErr(err)
			}
			defer closeStore(st, &err)
			if _, err := ddl.Create(ctx, st, plan); err != nil {
				return startErr(err)
			}
			var dl interface {
				write.DeadLetters
				Close() error
			}
			if source.IsKafkaURL(deadPath) {
				dl, err = source.OpenKafkaDeadLetters(ctx, deadURL)
			} else {
				dl, err = source.OpenDeadLetterFile(deadPath)
			}
			if err != nil {
				return startErr(err)
			}
			defer func() {
				if cerr := dl.Close(); err == nil && cerr != nil {
					err = cerr
				}
			}()
			host, _ := os.Hostname()
			src, err := source.OpenKafka(ctx, source.KafkaOptions{URL: u, Logger: lg,
				ClientID: fmt.Sprintf("denorm-sink-%s-%d", host, os.Getpid())})
			if err != nil {
				return err
			}
			defer src.Close()

			m := newSinkMetrics(src)
			if ln != nil {
				srv := &http.Server{Handler: m.routes(), ReadHeaderTimeout: 5 * time.Second}
				go func() { _ = srv.Serve(ln) }()
				defer srv.Close()
				lg.Info("metrics listening", "addr", ln.Addr().String())
			}

			// A signal stops the source, not the run: the loop finishes and
			// commits the batch in hand, then sees the end of the log. Only
			// a run still busy after the grace period is cancelled.
			// The command's context ends on a signal too (main sets that up),
			// so the run's context must not inherit that end.
			runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
			defer cancelRun()
			go func() {
				select {
				case <-sigCtx.Done():
				case <-runCtx.Done():
					return
				}
				lg.Info("stopping: finishing the batch in hand")
				m.stopping.Store(true)
				src.Stop()
				select {
				case <-time.After(grace):
					lg.Warn("the batch in hand did not finish in time: abandoning it uncommitted", "grace", grace.String())
					cancelRun()
				case <-runCtx.Done():
				}
			}()

			lg.Info("sink started", "topic", u.Topic, "group", u.Group, "brokers", u.Brokers,
				"schema", plan.Name, "dead_letter", deadPath)
			prog := newSinkProgress(cmd.ErrOrStderr(), lg)
			// The source fences the writer: a sink paused past its session
			// (and so out of the group) sends nothing once it resumes.
			w := write.New(plan, st, write.Options{Fence: src})
			stats, runErr := write.Run(runCtx, w, m.timed(src), m.counted(dl), write.RunOptions{
				BatchSize: batch,
				Progress: func(s write.Stats) {
					m.progress(s)
					prog.update(s, src.Lag())
				},
			})
			cancelRun()
			src.Close() // leaves the group now, so the log says so before it ends
			lg.Info("sink stopped", "events", stats.Events, "applied", stats.Applied, "stale", stats.Stale, "expired", stats.Expired,
				"redone", stats.Redone, "dead_letters", stats.DeadLetters, "batches", stats.Batches,
				"rebalances", src.Rebalances())
			if runErr != nil {
				if errors.Is(runErr, context.Canceled) && sigCtx.Err() != nil {
					return fmt.Errorf("stopped before the batch in hand was applied; it is uncommitted and will be replayed: %w", runErr)
				}
				return fmt.Errorf("%w (offsets of unapplied events are not committed: run again to resume)", runErr)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().StringVar(&from, "from", "", "the topic: kafka://HOST:PORT/TOPIC?group=G (required)")
	cmd.Flags().StringVar(&deadPath, "dead-letter", "", "dead letters: a kafka:// URL or a file path (default the topic TOPIC.dead)")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9464)")
	cmd.Flags().IntVar(&batch, "batch", 1000, "most events per batch")
	cmd.Flags().DurationVar(&grace, "shutdown-timeout", 30*time.Second, "time the batch in hand has to finish after SIGTERM")
	return cmd
}

// sinkProgress logs a progress line every few seconds, only when stderr
// is a terminal: logs collected by a supervisor have the metrics instead.
type sinkProgress struct {
	lg   *slog.Logger
	last time.Time
}

func newSinkProgress(w any, lg *slog.Logger) *sinkProgress {
	f, ok := w.(*os.File)
	if !ok {
		return &sinkProgress{}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return &sinkProgress{}
	}
	return &sinkProgress{lg: lg, last: time.Now()}
}

func (p *sinkProgress) update(s write.Stats, lag int64) {
	if p.lg == nil || time.Since(p.last) < 5*time.Second {
		return
	}
	p.last = time.Now()
	p.lg.Info("progress", "events", s.Events, "applied", s.Applied, "lag", lag)
}

// sameBrokers reports whether two broker lists share a broker, so name one
// cluster.
func sameBrokers(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
