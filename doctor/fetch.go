package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// jmxSubs are the RegionServer beans the doctor reads. Asking for each one
// keeps a live sample small: the full /jmx of a busy server runs to megabytes.
var jmxSubs = []string{"Regions", "Server", "IPC", "Tables", "TableLatencies"}

// IsURL reports whether a --jmx argument names a live endpoint rather than
// a saved file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// FetchJMX takes one sample of a RegionServer's /jmx. A URL that already
// carries a ?qry= is fetched as is; otherwise each bean the doctor reads is
// asked for in turn and the answers are merged.
func FetchJMX(ctx context.Context, client *http.Client, endpoint string) (*Snapshot, error) {
	if client == nil {
		client = http.DefaultClient
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("jmx url %q: %w", endpoint, err)
	}
	if u.Query().Get("qry") != "" {
		return fetchOne(ctx, client, endpoint, endpoint)
	}
	snap := newSnapshot(endpoint)
	for _, sub := range jmxSubs {
		q := *u
		q.RawQuery = "qry=Hadoop:service=HBase,name=RegionServer,sub=" + sub
		part, err := fetchOne(ctx, client, q.String(), endpoint)
		if err != nil {
			return nil, err
		}
		snap.merge(part)
	}
	return snap, nil
}

func fetchOne(ctx context.Context, client *http.Client, u, source string) (*Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("jmx request %s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch jmx %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch jmx %s: status %s", u, resp.Status)
	}
	return ParseJMX(resp.Body, source)
}

// ReadJMXFile parses a saved /jmx response.
func ReadJMXFile(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open jmx file: %w", err)
	}
	defer f.Close()
	return ParseJMX(io.Reader(f), path)
}
