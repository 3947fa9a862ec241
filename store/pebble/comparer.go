package pebble

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	pdb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// rowComparer orders keys exactly as Pebble's default (bytewise) comparer
// does; what it adds is Split, which tells Pebble that everything of a cell
// key after the row (family, qualifier, timestamp, type) is a suffix. Pebble
// then puts a row's prefix, not each cell key, into every sstable's bloom
// filter, and a SeekPrefixGE to a row skips each sstable whose filter says the
// row is not there without reading its index or data blocks. A read of one
// row otherwise visits every level of the tree; a read of a row that does not
// exist (the writer's first look at a new entity) visits them all for
// nothing.
//
// Split relies on the key invariants of key.go: the row part of a cell key
// is esc(row), in which 0x00 is always followed by 0xFF except in the part's
// terminator 0x00 0x01, so the first terminator after the table prefix ends
// the row. Because a terminated part is never a proper prefix of another,
// bytewise order of whole keys is bytewise order of prefixes, then of
// suffixes, which is what Pebble requires of a Split.
var rowComparer = func() *pdb.Comparer {
	c := *pdb.DefaultComparer
	c.Name = "denorm.row-prefix.v1"
	c.Split = rowPrefixLen
	c.ImmediateSuccessor = rowSuccessor
	return &c
}()

// rowPrefixLen returns the length of a key's row prefix: up to and including the
// terminator of esc(row) in a cell key, the whole key otherwise (metadata,
// the table counter, iterator bounds and seek targets that end inside a row
// part).
//
// Pebble splits a key at every seek and merge step, so the zero bytes are
// found with IndexByte, not a byte at a time: a row key encoded by
// package rowkey holds a zero per string part, escaped here as 0x00 0xFF.
func rowPrefixLen(k []byte) int {
	if len(k) <= tablePfx || k[0] != spaceData {
		return len(k)
	}
	for i := tablePfx; ; {
		j := bytes.IndexByte(k[i:], escByte)
		if j < 0 || i+j+1 >= len(k) {
			return len(k)
		}
		i += j
		if k[i+1] == escEnd {
			return i + 2
		}
		i += 2 // an escaped zero, 0x00 0xFF
	}
}

// rowSuccessor appends the smallest prefix above a. For a row prefix (ending
// in the terminator 0x00 0x01) that is the prefix with 0x00 0x02 instead,
// which sorts after every key of the row and is no row's prefix; appending
// 0x00, as the default comparer does, would sort inside the row (before its
// cells whose family part starts with 0x00). Any other prefix is a whole key
// with no suffix, and appending 0x00 gives its successor.
func rowSuccessor(dst, a []byte) []byte {
	n := len(a)
	if n >= tablePfx+2 && a[0] == spaceData && a[n-2] == escByte && a[n-1] == escEnd && rowPrefixLen(a) == n {
		dst = append(dst, a[:n-1]...)
		return append(dst, escEnd+1)
	}
	return append(append(dst, a...), 0x00)
}

// comparerFor picks the comparer for the database in dir: rowComparer for a
// new one or one made with it, Pebble's default for a store created before
// row filters existed (Pebble refuses to open a database with another
// comparer than it was made with). withFilters tells whether reads may rely
// on row prefixes being in bloom filters.
func comparerFor(dir string) (c *pdb.Comparer, withFilters bool, err error) {
	desc, err := pdb.Peek(dir, vfs.Default)
	if errors.Is(err, os.ErrNotExist) || err == nil && !desc.Exists {
		return rowComparer, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble store: look at %s: %w", dir, err)
	}
	name, err := optionsComparer(filepath.Join(dir, filepath.Base(desc.OptionsFilename)))
	if err != nil {
		return nil, false, err
	}
	switch name {
	case rowComparer.Name:
		return rowComparer, true, nil
	case pdb.DefaultComparer.Name:
		return pdb.DefaultComparer, false, nil
	default:
		return nil, false, fmt.Errorf("pebble store: %s was made with comparer %q, which is not the store's", dir, name)
	}
}

// optionsComparer reads the comparer name from a Pebble OPTIONS file.
func optionsComparer(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("pebble store: read options: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "comparer="); ok {
			return v, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("pebble store: read options %s: %w", file, err)
	}
	return "", fmt.Errorf("pebble store: options %s name no comparer", file)
}

// applyFilters gives every level a bloom filter of row prefixes (Pebble's
// default is none): 10 bits a row and sstable, a false positive rate of
// about 1%.
func applyFilters(po *pdb.Options) {
	po.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	for i := 1; i < len(po.Levels); i++ {
		po.Levels[i].FilterPolicy = po.Levels[0].FilterPolicy
	}
}

// seekRow positions it at the first key of the row whose prefix is prefix.
// With row filters it is a prefix seek, which passes over sstables whose
// filter lacks the row; the iterator then stays within the row until the
// next seek.
func (s *Store) seekRow(it *pdb.Iterator, prefix []byte) bool {
	if s.filters {
		return it.SeekPrefixGE(prefix) && bytes.HasPrefix(it.Key(), prefix)
	}
	return it.SeekGE(prefix) && bytes.HasPrefix(it.Key(), prefix)
}
