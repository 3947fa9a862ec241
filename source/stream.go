package source

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// fileStream names a file's stream: its absolute path and a hash of its
// first line (at most 4 KiB of it). An events file is a log that only
// grows, so both stay the same across restarts and appends; a file written
// anew under the same name (another log) most likely starts with another
// event and gets another stream, whose offsets the counters do not
// mistake for the old one's.
func fileStream(path string, f *os.File) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("source: absolute path of %s: %w", path, err)
	}
	head := make([]byte, 4096)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("source: read the start of %s: %w", path, err)
	}
	head = head[:n]
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	h := fnv.New64a()
	h.Write(head)
	return "file:" + abs + "#" + strconv.FormatUint(h.Sum64(), 16), nil
}
