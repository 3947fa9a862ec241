package hbase

import (
	"context"
	"github.com/denorm/denorm/internal/testenv"
	"net/url"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// liveURL returns the HBase gateway to test against. Without
// DENORM_HBASE_URL the test is skipped, except on CI, which must never
// skip it silently.
func liveURL(tb testing.TB) string {
	tb.Helper()
	return testenv.HBaseURL(tb)
}

// withDefaultParam adds a query parameter unless the URL already has it.
func withDefaultParam(tb testing.TB, raw, name, value string) string {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("DENORM_HBASE_URL %q: %v", raw, err)
	}
	q := u.Query()
	if q.Get(name) == "" {
		q.Set(name, value)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func openLive(tb testing.TB, raw string) *Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, raw)
	if err != nil {
		tb.Fatalf("open %s: %v", raw, err)
	}
	s, ok := st.(*Store)
	if !ok {
		tb.Fatalf("%s opened a %T, not the HBase store", raw, st)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
