package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simulateCLI runs the command without --store, as a simulation.
type simulateCLI struct{ t *testing.T }

func (c simulateCLI) run(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func (c simulateCLI) ok(args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("denorm %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

func (c simulateCLI) fails(code int, args ...string) {
	c.t.Helper()
	_, errs, got := c.run(args...)
	if got != code || strings.TrimSpace(errs) == "" {
		c.t.Fatalf("denorm %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), got, code, errs)
	}
}

func TestHotspotCommand(t *testing.T) {
	c := simulateCLI{t}
	dir := t.TempDir()
	naive := filepath.Join("..", "..", "examples", "device_events_naive.yaml")
	fixed := filepath.Join("..", "..", "examples", "device_events.yaml")

	out := c.ok("hotspot", naive, "--duration", "2h", "--step", "10m", "--out", filepath.Join(dir, "heat.png"))
	if !strings.Contains(out, "HOT SPOT") || !strings.Contains(out, "heat map written to") {
		t.Errorf("text for the time-led key:\n%s", out)
	}
	f, err := os.Open(filepath.Join(dir, "heat.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("heat.png: %v", err)
	}

	js := c.ok("hotspot", fixed, "--duration", "1h", "--step", "15m", "--format", "json", "--out", filepath.Join(dir, "heat.html"))
	var doc struct {
		Table   string `json:"table"`
		Summary struct {
			StartRegions int `json:"start_regions"`
			Writes       struct {
				Typical struct {
					MaxOverMean float64 `json:"max_over_mean"`
				} `json:"typical"`
			} `json:"writes"`
		} `json:"summary"`
		Steps []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if doc.Table != "device_events" || doc.Summary.StartRegions != 64 || len(doc.Steps) != 4 {
		t.Errorf("json: table %q, %d regions, %d steps", doc.Table, doc.Summary.StartRegions, len(doc.Steps))
	}
	page, err := os.ReadFile(filepath.Join(dir, "heat.html"))
	if err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("heat.html: %v", err)
	}

	c.fails(2, "hotspot", fixed, "--table", "nope")
	c.fails(2, "hotspot", fixed, "--out", filepath.Join(dir, "heat.gif"))
	c.fails(2, "hotspot", fixed, "--step", "2h", "--duration", "1h")
	c.fails(2, "hotspot", fixed, "--format", "yaml")
	c.fails(2, "hotspot", filepath.Join(dir, "missing.yaml"))
}

// With --store, the counts come from the store. The embedded store counts
// requests in memory since it opened, so a fresh command sees zeros; the
// counting itself is tested in package hotspot.
func TestHotspotObservedStore(t *testing.T) {
	c := newCLI(t)
	fixed := filepath.Join("..", "..", "examples", "device_events.yaml")
	c.ok("table", "create", "device_events", "--family", "d", "--split", "b", "--split", "c")
	out := simulateCLI{t}.ok("hotspot", fixed, "--format", "json", "--duration", "1h")
	if strings.Contains(out, `"source": "store"`) {
		t.Fatal("without --store on the command line the command must simulate")
	}
	var doc struct {
		Source  string            `json:"source"`
		Regions []json.RawMessage `json:"regions"`
	}
	out = c.ok("hotspot", fixed, "--format", "json", "--out", filepath.Join(t.TempDir(), "observed.png"))
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Source != "store" || len(doc.Regions) != 3 {
		t.Errorf("observed: source %q with %d regions, want store and 3", doc.Source, len(doc.Regions))
	}
	if text := c.ok("hotspot", fixed); !strings.Contains(text, "No requests recorded") {
		t.Errorf("text for a store with no requests:\n%s", text)
	}
	c.fails(2, "hotspot", fixed, "--table", "device_alerts") // not created
}
