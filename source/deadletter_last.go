package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// LastDeadLetter returns the last dead letter a file holds (ok false when
// it holds none or does not exist). A run that resumes after a kill replays
// the uncommitted tail of its log; the dead letters it wrote for that tail
// before it died are the ones at the end of the file, and this is how the
// resumed run knows not to write them twice.
func LastDeadLetter(path string) (DeadLetter, bool, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return DeadLetter{}, false, nil
	}
	if err != nil {
		return DeadLetter{}, false, fmt.Errorf("source: read dead letter file: %w", err)
	}
	defer f.Close()
	line, err := lastLine(f)
	if err != nil || len(line) == 0 {
		return DeadLetter{}, false, err
	}
	var dl DeadLetter
	if err := json.Unmarshal(line, &dl); err != nil {
		// A torn last line (the writer died mid-write) holds no dead
		// letter that was made durable.
		return DeadLetter{}, false, nil
	}
	return dl, true, nil
}

// lastLine reads backwards from the end of f to the start of its last
// non-empty line, without reading the file whole.
func lastLine(f *os.File) ([]byte, error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	const chunk = 64 << 10
	var tail []byte
	for pos := end; pos > 0; {
		n := int64(chunk)
		if pos < n {
			n = pos
		}
		pos -= n
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos); err != nil {
			return nil, fmt.Errorf("source: read dead letter file: %w", err)
		}
		tail = append(buf, tail...)
		trimmed := bytes.TrimRight(tail, "\n")
		if i := bytes.LastIndexByte(trimmed, '\n'); i >= 0 {
			return trimmed[i+1:], nil
		}
		if pos == 0 {
			return trimmed, nil
		}
	}
	return nil, nil
}

// SameLog reports whether two record places ("events.jsonl:17") name the
// same log: everything before the last colon.
func SameLog(a, b string) bool {
	i, j := strings.LastIndexByte(a, ':'), strings.LastIndexByte(b, ':')
	return i >= 0 && j >= 0 && a[:i] == b[:j]
}
