package reconcile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// A checkpoint file holds one line: the table and the last primary key done
// (hex). A run given the file skips every key up to it, so an interrupted
// run resumes where it stopped; a finished run removes it. It is replaced
// atomically (write, rename). A schema with several primary tables resumes
// only the table the file names; the others start over. A resumed run does
// not check counter totals or counter orphans (they need every row).

// ErrBadCheckpoint: the checkpoint file is not one this package wrote. The
// caller gave a wrong or damaged file: an input error, not a failed run.
var ErrBadCheckpoint = errors.New("not a reconcile checkpoint")

func readCheckpoint(path, table string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reconcile: checkpoint: %w", err)
	}
	t, k, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok {
		return nil, fmt.Errorf("reconcile: checkpoint %s: %w: want \"table hexkey\" (delete it to start over)", path, ErrBadCheckpoint)
	}
	if t != table {
		return nil, nil
	}
	key, err := hex.DecodeString(k)
	if err != nil {
		return nil, fmt.Errorf("reconcile: checkpoint %s: %w: %w (delete it to start over)", path, ErrBadCheckpoint, err)
	}
	return key, nil
}

func writeCheckpoint(path, table string, key []byte) error {
	if path == "" {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(table+" "+hex.EncodeToString(key)+"\n"), 0o644); err != nil {
		return fmt.Errorf("reconcile: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("reconcile: checkpoint: %w", err)
	}
	return nil
}

func removeCheckpoint(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reconcile: checkpoint: %w", err)
	}
	return nil
}
