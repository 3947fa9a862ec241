package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Position is a place in a file log: the byte offset of the next line to
// read and its line number.
type Position struct {
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
}

// File reads a JSON-lines event file from a committed position.
type File struct {
	path    string
	f       *os.File
	r       *bufio.Reader
	pos     Position // of the next line
	offsets *OffsetFile
	maxLine int
	stream  string
}

// FileOptions configure OpenFile.
type FileOptions struct {
	// OffsetPath is where the committed position is kept; "" means the
	// events file's path plus ".offset".
	OffsetPath string
	// FromStart ignores the committed position and replays everything.
	FromStart bool
	// MaxLineBytes refuses longer lines (they go to the dead letter, cut);
	// 0 means 64 MiB.
	MaxLineBytes int
}

// OpenFile opens an event file at its committed position.
func OpenFile(path string, opts FileOptions) (*File, error) {
	if opts.OffsetPath == "" {
		opts.OffsetPath = path + ".offset"
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = 64 << 20
	}
	of := &OffsetFile{Path: opts.OffsetPath}
	var pos Position
	if !opts.FromStart {
		var err error
		if pos, err = of.Load(); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("source: open events: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("source: stat %s: %w", path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("source: events %s is a directory, not a JSON-lines file", path)
	}
	if pos.Offset > fi.Size() {
		f.Close()
		return nil, fmt.Errorf("source: committed offset %d in %s is past the end of %s (%d bytes): was the file replaced? replay with --from-start",
			pos.Offset, opts.OffsetPath, path, fi.Size())
	}
	// A committed offset is just past a newline, or at the end of a last
	// line that had none (then at the end of the file, or before the
	// newline that later starts the next line). One that is neither
	// belongs to another file of that name: reading from it would start
	// mid-line and skip everything before it.
	if pos.Offset > 0 && pos.Offset < fi.Size() {
		var b [2]byte
		if _, err := f.ReadAt(b[:], pos.Offset-1); err != nil || b[0] != '\n' && b[1] != '\n' {
			f.Close()
			return nil, fmt.Errorf("source: committed offset %d in %s is not the start of a line of %s: the offset belongs to another file of that name; replay with --from-start (or remove %s)",
				pos.Offset, opts.OffsetPath, path, opts.OffsetPath)
		}
	}
	if _, err := f.Seek(pos.Offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("source: seek %s to %d: %w", path, pos.Offset, err)
	}
	stream, err := fileStream(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{path: path, f: f, r: bufio.NewReaderSize(f, 1<<20), pos: pos, offsets: of, maxLine: opts.MaxLineBytes, stream: stream}, nil
}

// Position is where the next Next starts.
func (l *File) Position() Position { return l.pos }

// Size is the file's size in bytes, for progress.
func (l *File) Size() int64 {
	fi, err := l.f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Next returns up to max records; at the end of the file it returns what
// it has, and io.EOF once nothing is left. Blank lines are skipped. A final
// line without a newline is read too.
func (l *File) Next(ctx context.Context, max int) ([]Record, error) {
	var out []Record
	for len(out) < max {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		line, n, err := l.readLine()
		if n == 0 && errors.Is(err, io.EOF) {
			if len(out) == 0 {
				return nil, io.EOF
			}
			return out, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("source: read %s at line %d: %w", l.path, l.pos.Line+1, err)
		}
		rec := Record{Data: line, Offset: l.pos.Offset, Line: l.pos.Line + 1, Stream: l.stream}
		rec.Where = filepath.Base(l.path) + ":" + strconv.FormatInt(rec.Line, 10)
		l.pos.Offset += int64(n)
		l.pos.Line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// readLine reads one line and how many bytes it took. A line over the
// limit is returned cut to the limit (its tail is skipped), so the decoder
// rejects it and the reader stays in step.
func (l *File) readLine() ([]byte, int, error) {
	var buf []byte
	n := 0
	for {
		frag, err := l.r.ReadSlice('\n')
		n += len(frag)
		if len(buf) < l.maxLine+1 {
			buf = append(buf, frag[:min(len(frag), l.maxLine+1-len(buf))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), n, err
	}
}

// Commit records the position after the last record returned, durably.
func (l *File) Commit(ctx context.Context) error {
	return l.offsets.Save(l.pos)
}

// Mark names the position after every record Next has returned so far,
// for CommitMark: the writer reads the next batch before it commits the
// last one.
func (l *File) Mark() any { return l.pos }

// CommitMark makes a position Mark returned the restart point.
func (l *File) CommitMark(ctx context.Context, mark any) error {
	pos, ok := mark.(Position)
	if !ok {
		return fmt.Errorf("source: commit %s: %T is not a mark of a file log", l.path, mark)
	}
	return l.offsets.Save(pos)
}

// Ready reports that Next may be called with records in hand: reading a
// file never waits for the log to grow.
func (l *File) Ready() bool { return true }

// Close closes the file.
func (l *File) Close() error { return l.f.Close() }

// OffsetFile keeps a committed position: written to a temporary file,
// synced, then renamed over the old one, so a crash leaves the old or the
// new position, never a torn one.
type OffsetFile struct{ Path string }

// Load reads the committed position; a missing file is the start.
func (o *OffsetFile) Load() (Position, error) {
	b, err := os.ReadFile(o.Path)
	if errors.Is(err, os.ErrNotExist) {
		return Position{}, nil
	}
	if err != nil {
		return Position{}, fmt.Errorf("source: read offset file: %w", err)
	}
	var p Position
	if err := json.Unmarshal(b, &p); err != nil || p.Offset < 0 || p.Line < 0 {
		return Position{}, fmt.Errorf("source: offset file %s is corrupt (%q): delete it to replay from the start", o.Path, bytes.TrimSpace(b))
	}
	return p, nil
}

// Save writes a position durably.
func (o *OffsetFile) Save(p Position) error {
	b, _ := json.Marshal(p)
	tmp := o.Path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("source: write offset: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("source: write offset: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("source: sync offset: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("source: close offset: %w", err)
	}
	if err := os.Rename(tmp, o.Path); err != nil {
		return fmt.Errorf("source: commit offset: %w", err)
	}
	if d, err := os.Open(filepath.Dir(o.Path)); err == nil {
		_ = d.Sync() // make the rename durable; best effort where dirs cannot sync
		d.Close()
	}
	return nil
}
