package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/denorm/denorm/read"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// hostileServer is serve's handler on a store of the orders example.
func hostileServer(t *testing.T) http.Handler {
	t.Helper()
	c, schemaPath := ordersCLI(t)
	plan, err := schema.Load(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), c.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &server{plan: plan, reader: read.New(plan, st, read.Options{Logger: lg}), log: lg,
		timeout: 5e9, metrics: newServeMetrics()}
	return s.routes()
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

func TestServeHostileRequests(t *testing.T) {
	h := hostileServer(t)
	if code, body := get(t, h, "/v1/query/recent_orders?customerId=c1"); code != http.StatusOK {
		t.Fatalf("a good request: %d %s", code, body)
	}
	for _, tc := range []struct{ name, target, want string }{
		{"long name", "/v1/query/" + strings.Repeat("q", 500<<10) + "?customerId=c1", "(512000 bytes)"},
		{"semicolon", "/v1/query/recent_orders?customerId=c1;x=1", "holds a ';'"},
		{"too many", "/v1/query/recent_orders?customerId=c1" + strings.Repeat("&a=1", 10000), "10001 parameters, more than 10000"},
		{"bad escape", "/v1/query/recent_orders?customerId=%zz", "bad query string"},
		{"long parameter", "/v1/query/recent_orders?customerId=c1&" + strings.Repeat("p", 100<<10) + "=1", "no parameter"},
		{"long value", "/v1/query/recent_orders?customerId=" + strings.Repeat("v", 100<<10), "102400 bytes is more than"},
	} {
		code, body := get(t, h, tc.target)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.300s, want 400 and %q", tc.name, code, body, tc.want)
		}
		if len(body) > 1024 {
			t.Errorf("%s: a %d-byte answer echoes the request", tc.name, len(body))
		}
	}
	// Two unknown parameters: the same one is named every time.
	for range 30 {
		_, body := get(t, h, "/v1/query/recent_orders?customerId=c1&zz=1&mm=2&aa=3")
		if !strings.Contains(body, `by \"aa\"`) {
			t.Fatalf("unknown parameters named as %s, want aa first", body)
		}
	}
}
