package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRoundDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		6 * time.Hour: "6h", 90 * time.Second: "1m30s", time.Minute: "1m", 15 * time.Minute: "15m",
		time.Hour + 30*time.Minute: "1h30m", 45 * time.Second: "45s", 2500 * time.Millisecond: "2.5s",
	} {
		if got := roundDuration(d); got != want {
			t.Errorf("roundDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A bar draws on a terminal (forced here onto a buffer) and grows its total
// when the work outruns the estimate; off a terminal it draws nothing.
func TestBar(t *testing.T) {
	var tty bytes.Buffer
	b := startBar(&tty, 10, "generating", "events", false)
	cw := countingWriter{w: &bytes.Buffer{}, bar: b}
	if _, err := cw.Write([]byte("a\nb\nc\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // past the bar's throttle
	b.add(12)
	if got := b.pb.GetMax64(); got != 15 {
		t.Errorf("total after 15 of an estimated 10: %d, want 15", got)
	}
	b.done()
	if out := tty.String(); !strings.Contains(out, "generating") || !strings.Contains(out, "/15") {
		t.Errorf("the bar drew %q", out)
	}

	spin := startBar(&bytes.Buffer{}, -1, "reconciling", "rows", false)
	spin.set(40)
	spin.set(100)
	if spin.done64 != 100 {
		t.Errorf("spinner count %d, want 100", spin.done64)
	}

	var plain bytes.Buffer
	off := newBar(&plain, 10, "x", "y", false)
	off.add(5)
	off.set(7)
	off.done()
	if plain.Len() != 0 || off.pb != nil {
		t.Errorf("off a terminal the bar wrote %q", plain.String())
	}
	stop := spinner(&plain, "simulating")
	stop()
	stop()
	if plain.Len() != 0 {
		t.Errorf("off a terminal the spinner wrote %q", plain.String())
	}
}

// The long commands print nothing on a stderr that is not a terminal.
func TestNoProgressOffTerminal(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	events := filepath.Join(dir, "ev.jsonl")
	schemaFile := filepath.Join("..", "..", "examples", "orders.yaml")
	for _, args := range [][]string{
		{"gen", "orders", "--events", "300", "--out", events},
		{"apply", "--schema", schemaFile, "--events", events},
		{"reconcile", "--schema", schemaFile, "--dry-run"},
		{"cost", schemaFile, "--measure", "200"},
		{"hotspot", schemaFile, "--duration", "1h", "--step", "1m", "--samples", "200"},
	} {
		_, stderr, code := c.run(args...)
		if code != 0 {
			t.Fatalf("denorm %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if strings.ContainsAny(stderr, "\r\u2588") || strings.Contains(stderr, "%|") {
			t.Errorf("denorm %s drew progress on a non-terminal stderr: %q", strings.Join(args, " "), stderr)
		}
	}
}
