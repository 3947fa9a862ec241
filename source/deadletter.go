package source

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"unicode/utf8"
)

// DeadLetter is one refused event: the original line, where it was, and
// why. As JSON: {"where","offset","line","reason","event"} where event is
// the original line as a string (or "event_base64" when it is not UTF-8).
type DeadLetter struct {
	Where       string `json:"where"`
	Offset      int64  `json:"offset"`
	Line        int64  `json:"line,omitempty"`
	Reason      string `json:"reason"`
	Event       string `json:"event,omitempty"`
	EventBase64 []byte `json:"event_base64,omitempty"`
}

// DeadLetterFile appends dead letters to a JSON-lines file.
type DeadLetterFile struct {
	path string
	f    *os.File
	w    *bufio.Writer
	n    int
	// last is the file's last dead letter at open (hasLast false: none).
	last    DeadLetter
	hasLast bool
}

// OpenDeadLetterFile opens (appending) a dead-letter file.
func OpenDeadLetterFile(path string) (*DeadLetterFile, error) {
	last, ok, err := LastDeadLetter(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("source: open dead letter file: %w", err)
	}
	return &DeadLetterFile{path: path, f: f, w: bufio.NewWriter(f), last: last, hasLast: ok}, nil
}

// Add records one refused event.
func (d *DeadLetterFile) Add(ctx context.Context, rec Record, reason error) error {
	dl := DeadLetter{Where: rec.Where, Offset: rec.Offset, Line: rec.Line, Reason: reason.Error()}
	if utf8.Valid(rec.Data) {
		dl.Event = string(rec.Data)
	} else {
		dl.EventBase64 = rec.Data
	}
	b, err := json.Marshal(dl)
	if err != nil {
		return fmt.Errorf("source: encode dead letter: %w", err)
	}
	if _, err := d.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("source: write dead letter to %s: %w", d.path, err)
	}
	d.n++
	return nil
}

// Last is the last dead letter the file held when it was opened.
func (d *DeadLetterFile) Last() (DeadLetter, bool) { return d.last, d.hasLast }

// Count is how many dead letters this file took since it was opened.
func (d *DeadLetterFile) Count() int { return d.n }

// Flush makes the dead letters durable; call it before committing the
// offset of the batch they came from.
func (d *DeadLetterFile) Flush(ctx context.Context) error {
	if err := d.w.Flush(); err != nil {
		return fmt.Errorf("source: flush dead letters to %s: %w", d.path, err)
	}
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("source: sync dead letters to %s: %w", d.path, err)
	}
	return nil
}

// Close flushes and closes.
func (d *DeadLetterFile) Close() error {
	if err := d.Flush(context.Background()); err != nil {
		d.f.Close()
		return err
	}
	return d.f.Close()
}
