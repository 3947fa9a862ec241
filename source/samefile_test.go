package source

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(ev, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(ev, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		a, b string
		same bool
	}{
		{ev, ev, true},
		{ev, link, true},
		{ev, filepath.Join(sub, "..", "events.jsonl"), true},
		{ev, filepath.Join(dir, "events.jsonl.dead.jsonl"), false},
		{filepath.Join(dir, "new.jsonl"), filepath.Join(sub, "..", "new.jsonl"), true},
		{filepath.Join(dir, "new.jsonl"), filepath.Join(dir, "other.jsonl"), false},
	}
	for _, c := range cases {
		if got := SameFile(c.a, c.b); got != c.same {
			t.Errorf("SameFile(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
