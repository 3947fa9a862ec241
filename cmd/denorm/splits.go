package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/denorm/denorm/store"
)

// maxSplitLine bounds one line of a splits file: a row key is at most 32767
// bytes in HBase, and its printable form at most four times that.
const maxSplitLine = 4 * 32767

// readSplitsFile reads split keys, one a line in printable form (\xNN
// escapes). Blank lines and lines starting with '#' are skipped; write a
// leading '#' of a key as \x23.
func readSplitsFile(r io.Reader, name string) ([][]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSplitLine+2)
	var keys [][]byte
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, err := store.ParsePrintable(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: line %d: %w", name, line+1, err)
	}
	return keys, nil
}

// normalizeSplits sorts split keys and refuses empty and repeated ones, as
// HBase's createTable does.
func normalizeSplits(keys [][]byte) ([][]byte, error) {
	out := slices.Clone(keys)
	slices.SortFunc(out, bytes.Compare)
	for i, k := range out {
		if len(k) == 0 {
			return nil, fmt.Errorf("empty split key: the first region already starts at the empty key")
		}
		if i > 0 && bytes.Equal(k, out[i-1]) {
			return nil, fmt.Errorf("split key %s given twice", store.Printable(k))
		}
	}
	return out, nil
}
