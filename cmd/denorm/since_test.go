package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	good := map[string]time.Time{
		"36h":                  now.Add(-36 * time.Hour),
		"7d":                   now.AddDate(0, 0, -7),
		"2w":                   now.AddDate(0, 0, -14),
		"90m":                  now.Add(-90 * time.Minute),
		"2026-11-01":           time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		"2026-11-29T08:30:00Z": time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC),
	}
	for v, want := range good {
		got, err := parseSince(v, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"", "0d", "-3d", "-1h", "7x", "d", "2027-01-01", "2026-13-01", "99999999999d", "yesterday"} {
		if got, err := parseSince(v, now); err == nil {
			t.Errorf("parseSince(%q) = %v, want an error", v, got)
		} else if !strings.Contains(err.Error(), "--since") {
			t.Errorf("parseSince(%q): error %q does not name the flag", v, err)
		}
	}
}

// FuzzParseSince: any flag value gives a time at or before now, or an
// error naming the flag; never a panic.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"7d", "36h", "2026-11-01", "2026-11-29T08:30:00+01:00", "2147483647w", "1e9h", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := parseSince(v, now)
		if err != nil {
			if !strings.Contains(err.Error(), "--since") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if got.After(now) {
			t.Fatalf("parseSince(%q) = %v, after now", v, got)
		}
	})
}

func TestReconcileSinceFlag(t *testing.T) {
	c := newCLI(t)
	msg := c.fails(exitUsage, "reconcile", "--schema", "../../examples/orders.yaml", "--since", "soon")
	if !strings.Contains(msg, "--since") {
		t.Fatalf("stderr does not name the flag: %s", msg)
	}
	// A good window runs, over what the writer wrote: nothing differs.
	events := filepath.Join(t.TempDir(), "orders.jsonl")
	c.ok("gen", "orders", "--events", "200", "--out", events)
	c.ok("apply", "--schema", "../../examples/orders.yaml", "--events", events)
	c.ok("reconcile", "--schema", "../../examples/orders.yaml", "--since", "2026-09-01", "--dry-run")
}
