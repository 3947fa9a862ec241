package source

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Records carry their offset, line number and place; blank lines are
// skipped; a last line without a newline is read; a commit is where the next
// open starts.
func TestFileReadCommitResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ev.jsonl")
	write(t, path, "a\n\nbb\r\nccc")
	ctx := context.Background()
	f, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := f.Next(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0].Data) != "a" || string(recs[1].Data) != "bb" ||
		recs[1].Offset != 3 || recs[1].Line != 3 || recs[1].Where != "ev.jsonl:3" {
		t.Fatalf("records %+v", recs)
	}
	if err := f.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f.Close()

	f, err = OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err = f.Next(ctx, 10)
	if err != nil || len(recs) != 1 || string(recs[0].Data) != "ccc" || recs[0].Line != 4 {
		t.Fatalf("after resume: %+v, %v", recs, err)
	}
	if _, err := f.Next(ctx, 10); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}

	again, err := OpenFile(path, FileOptions{FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if recs, _ := again.Next(ctx, 10); len(recs) != 3 {
		t.Fatalf("from start: %d records, want 3", len(recs))
	}
}

// A line over the limit is returned cut (so the decoder refuses it) and the
// reader stays on line boundaries.
func TestFileLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ev.jsonl")
	write(t, path, strings.Repeat("x", 5000)+"\nnext\n")
	f, err := OpenFile(path, FileOptions{MaxLineBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := f.Next(context.Background(), 10)
	if err != nil || len(recs) != 2 || len(recs[0].Data) != 101 || string(recs[1].Data) != "next" || recs[1].Offset != 5001 {
		t.Fatalf("records %d, first %d bytes, err %v", len(recs), len(recs[0].Data), err)
	}
}

// A corrupt offset file, or one past the end of the file, is refused with
// a message that says what to do.
func TestOffsetErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ev.jsonl")
	write(t, path, "a\n")
	write(t, path+".offset", "garbage")
	if _, err := OpenFile(path, FileOptions{}); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt offset: %v", err)
	}
	if err := (&OffsetFile{Path: path + ".offset"}).Save(Position{Offset: 99, Line: 9}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(path, FileOptions{}); err == nil || !strings.Contains(err.Error(), "--from-start") {
		t.Fatalf("offset past the end: %v", err)
	}
	if _, err := OpenFile(filepath.Join(dir, "missing"), FileOptions{}); err == nil {
		t.Fatal("a missing file opened")
	}
}

// Dead letters keep the original line, where and why; lines that are not
// UTF-8 travel as base64.
func TestDeadLetterFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dead.jsonl")
	d, err := OpenDeadLetterFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := d.Add(ctx, Record{Data: []byte(`{"x":1}`), Offset: 7, Line: 2, Where: "ev:2"}, errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	if err := d.Add(ctx, Record{Data: []byte{0xff, 0xfe}, Where: "ev:3"}, errors.New("worse")); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"event":"{\"x\":1}"`) || !strings.Contains(lines[0], `"reason":"bad"`) ||
		!strings.Contains(lines[1], `"event_base64":"//4="`) {
		t.Fatalf("dead letters:\n%s", b)
	}
}

// An offset file left by another file of the same name points into the
// middle of a line of the new one: refused, instead of skipping silently
// everything before it.
func TestFileOffsetOfAnotherFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, []byte("{\"a\":1}\n{\"a\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Next(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The same name, other lines: offset 8 is now inside the first line.
	if err := os.WriteFile(path, []byte("{\"bbb\":1}\n{\"bbb\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(path, FileOptions{}); err == nil || !strings.Contains(err.Error(), "not the start of a line") {
		t.Fatalf("err = %v, want a refusal naming the offset", err)
	}
	if g, err := OpenFile(path, FileOptions{FromStart: true}); err != nil {
		t.Fatalf("--from-start: %v", err)
	} else {
		g.Close()
	}
}
