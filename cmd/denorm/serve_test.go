package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real `denorm serve` process on a free loopback port answers queries,
// refuses bad ones with 400, counts them in /metrics and stops on SIGTERM.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	c, _ := ordersCLI(t)
	schema, _ := filepath.Abs(filepath.Join("..", "..", "examples", "orders.yaml"))
	cmd := denormCmd("serve", "--schema", schema, "--store", c.url, "--addr", "127.0.0.1:0", "--max-limit", "50")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // fails harmlessly once it exited
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addrc <- line.Addr
			}
		}
		exited <- cmd.Wait()
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-exited:
		t.Fatalf("serve exited before listening: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start listening")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}

	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("healthz: %d %s", code, body)
	}
	code, body := get("/v1/query/recent_orders?customerId=c000003&limit=3")
	var doc queryDoc
	if code != 200 || json.Unmarshal([]byte(body), &doc) != nil || len(doc.Rows) != 3 || doc.Next == "" {
		t.Fatalf("recent_orders: %d %s", code, body)
	}
	code, body = get("/v1/query/recent_orders?customerId=c000003&limit=3&next=" + url.QueryEscape(doc.Next))
	var page2 queryDoc
	if code != 200 || json.Unmarshal([]byte(body), &page2) != nil || len(page2.Rows) == 0 || page2.Rows[0]["orderId"] == doc.Rows[2]["orderId"] {
		t.Fatalf("second page: %d %s", code, body)
	}
	code, body = get("/v1/query/orders_by_status?status=SHIPPED&limit=100000")
	doc = queryDoc{}
	if code != 200 || json.Unmarshal([]byte(body), &doc) != nil || len(doc.Rows) != 50 {
		t.Fatalf("a limit over the cap: %d, %d rows", code, len(doc.Rows))
	}
	for _, bad := range []string{
		"/v1/query/no_such_query?x=1",
		"/v1/query/recent_orders",
		"/v1/query/recent_orders?customerId=a&status=OPEN",
		"/v1/query/recent_orders?customerId=a&customerId=b",
		"/v1/query/recent_orders?customerId=a&limit=0",
		"/v1/query/recent_orders?customerId=a&limit=ten",
		"/v1/query/recent_orders?customerId=a&next=%25%25",
		"/v1/query/open_order?customerId=a&orderId=b&placedAt=tomorrow",
		"/v1/query/daily_units?items.sku=s1&placedAt=1e99",
	} {
		code, body := get(bad)
		var e struct{ Error string }
		if code != 400 || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
			t.Errorf("%s: %d %s, want 400 with a message", bad, code, body)
		}
	}
	code, body = get("/metrics")
	for _, want := range []string{`denorm_queries_total{code="400",query="recent_orders"}`, `denorm_queries_total{code="200",query="orders_by_status"} 1`, "denorm_query_duration_seconds_bucket", `query="unknown"`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}
