package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/denorm/denorm/read"
	"github.com/denorm/denorm/schema"
)

func newServeCmd() *cobra.Command {
	var (
		schemaPath, addr string
		maxLimit         int
		timeout          time.Duration
		repair           bool
	)
	cmd := &cobra.Command{
		Use:   "serve --schema S [--store URL] [--addr 127.0.0.1:8080]",
		Short: "Serve the schema's queries over HTTP, with Prometheus metrics",
		Long: `Serve every query of the schema over HTTP:

  GET /v1/query/NAME?field=value&limit=N&next=TOKEN
      -> {"rows":[...],"dropped_stale":n,"repaired":n,"next":token}
  GET /metrics   Prometheus: queries by name and status, latency, stale
                 index hits, repairs
  GET /healthz   200 while the server runs

Values are given as for denorm query (timestamps as RFC 3339 or epoch
milliseconds). A bad parameter, an unknown query or a query that would scan
the whole table gets 400 with a message; limits above --max-limit are cut
to it; each request has --timeout to finish (504 after it).

The server binds loopback by default: it has no authentication. SIGTERM or
Ctrl-C stops it after the requests in flight finish.

The embedded store serves one process at a time: while serve has a
pebble:// store open, apply cannot use it (it is told the store is in use).
To serve while events are applied, use --store hbase://HOST:PORT.`,
		Example: `  denorm serve --schema examples/orders.yaml
  curl 'http://127.0.0.1:8080/v1/query/recent_orders?customerId=c000003&limit=5'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if schemaPath == "" {
				return usageErrorf("--schema is required")
			}
			if maxLimit < 1 || timeout <= 0 {
				return usageErrorf("--max-limit and --timeout must be positive")
			}
			plan, err := loadSchema(schemaPath)
			if err != nil {
				return err
			}
			lg := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
			st, err := openStore(cmd)
			if err != nil {
				return err
			}
			defer closeStore(st, &err)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageError(fmt.Errorf("listening on %s: %w", addr, err))
			}
			if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
				lg.Warn("listening beyond loopback: the server has no authentication", "addr", ln.Addr().String())
			}
			s := &server{
				plan:    plan,
				reader:  read.New(plan, st, read.Options{MaxLimit: maxLimit, Logger: lg}),
				log:     lg,
				timeout: timeout,
				repair:  repair,
				metrics: newServeMetrics(),
			}
			srv := &http.Server{
				Handler:           s.routes(),
				ReadHeaderTimeout: 5 * time.Second,
				ReadTimeout:       10 * time.Second,
				WriteTimeout:      timeout + 5*time.Second,
				IdleTimeout:       time.Minute,
				ErrorLog:          slog.NewLogLogger(lg.Handler(), slog.LevelWarn),
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			lg.Info("listening", "addr", ln.Addr().String(), "schema", plan.Name)
			select {
			case err := <-done:
				return err
			case <-ctx.Done():
			}
			lg.Info("shutting down")
			sctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				return fmt.Errorf("shutting down: %w", err)
			}
			lg.Info("stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&schemaPath, "schema", "", "schema file (required)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (loopback by default)")
	cmd.Flags().IntVar(&maxLimit, "max-limit", read.MaxLimit, "the largest page a request may ask for")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "time a request has to finish")
	cmd.Flags().BoolVar(&repair, "repair", false, "delete stale thin-index entries found while reading")
	return cmd
}

type serveMetrics struct {
	reg      *prometheus.Registry
	queries  *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	stale    *prometheus.CounterVec
	repaired *prometheus.CounterVec
}

// newServeMetrics registers on a registry of the server's own, not the
// global one, so that tests can run several servers in one process.
func newServeMetrics() *serveMetrics {
	m := &serveMetrics{
		reg: prometheus.NewRegistry(),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "denorm_queries_total", Help: "Queries served, by query and HTTP status.",
		}, []string{"query", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "denorm_query_duration_seconds", Help: "Query latency, by query.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"query"}),
		stale: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "denorm_stale_index_hits_total", Help: "Thin index hits dropped because the primary row disagreed.",
		}, []string{"query"}),
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "denorm_index_repairs_total", Help: "Stale index rows deleted by read repair.",
		}, []string{"query"}),
	}
	m.reg.MustRegister(m.queries, m.latency, m.stale, m.repaired,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

type server struct {
	plan    *schema.Plan
	reader  *read.Reader
	log     *slog.Logger
	timeout time.Duration
	repair  bool
	metrics *serveMetrics
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/query/{name}", s.query)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	return mux
}

func (s *server) query(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	name := r.PathValue("name")
	label := name
	if s.plan.Query(name) == nil {
		label = "unknown" // a client must not be able to grow the label set
	}
	code := http.StatusOK
	defer func() {
		s.metrics.queries.WithLabelValues(label, strconv.Itoa(code)).Inc()
		s.metrics.latency.WithLabelValues(label).Observe(time.Since(start).Seconds())
		s.log.Info("query", "query", echo(name), "status", code, "duration", time.Since(start))
	}()
	req, err := s.request(name, r)
	if err != nil {
		code = http.StatusBadRequest
		writeError(w, code, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	res, err := s.reader.Run(ctx, req)
	switch {
	case errors.Is(err, read.ErrBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		code = http.StatusGatewayTimeout
	case err != nil:
		code = http.StatusInternalServerError
		s.log.Error("query failed", "query", name, "err", err)
	}
	if err != nil {
		writeError(w, code, err)
		return
	}
	s.metrics.stale.WithLabelValues(label).Add(float64(res.DroppedStale))
	s.metrics.repaired.WithLabelValues(label).Add(float64(res.Repaired))
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(res); err != nil {
		s.log.Warn("writing a response", "query", name, "err", err)
	}
}

// request turns URL parameters into a read request: limit and next are
// paging, every other parameter is a field value.
func (s *server) request(name string, r *http.Request) (read.Request, error) {
	req := read.Request{Query: name, Values: map[string]any{}, Repair: s.repair}
	if s.plan.Query(name) == nil {
		return req, fmt.Errorf("no query %q", echo(name))
	}
	// url.Query drops what it cannot parse, which would turn a mistake in
	// the query string into a misleading "needs a field".
	raw := r.URL.RawQuery
	if n := strings.Count(raw, "&") + 1; n > maxQueryParams {
		return req, fmt.Errorf("the query string has %d parameters, more than %d", n, maxQueryParams)
	}
	if strings.Contains(raw, ";") {
		return req, fmt.Errorf("the query string holds a ';': separate parameters with '&' (or escape it as %%3B)")
	}
	params, err := url.ParseQuery(raw)
	if err != nil {
		return req, fmt.Errorf("bad query string: %v", err)
	}
	// In name order, so that a request with two bad parameters is always
	// told about the same one.
	for _, k := range slices.Sorted(maps.Keys(params)) {
		vs := params[k]
		if len(vs) != 1 {
			return req, fmt.Errorf("%s is given %d times", echo(k), len(vs))
		}
		v := vs[0]
		if len(k) > 128 { // longer than any schema name
			return req, fmt.Errorf("no parameter %q", echo(k))
		}
		if len(v) > maxValue {
			return req, fmt.Errorf("%s: a value of %d bytes is more than %d", k, len(v), maxValue)
		}
		switch k {
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return req, fmt.Errorf("limit %q: want a positive integer", v)
			}
			req.Limit = n
		case "next":
			req.Next = v
		default:
			val, err := s.reader.ParseValue(name, k, v)
			if err != nil {
				return req, err
			}
			req.Values[k] = val
		}
	}
	return req, nil
}

// maxQueryParams is net/url's own limit on the parameters it parses.
const maxQueryParams = 10000

// maxValue bounds one parameter's value: a row key is at most 32767 bytes.
const maxValue = 32767

// maxEcho bounds the part of a client's text an answer or a log line
// repeats: a 500 KB query name must not make a 500 KB response.
const maxEcho = 64

// echo cuts a client's text to maxEcho bytes (at a rune start) for
// repeating it back.
func echo(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	n := maxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
