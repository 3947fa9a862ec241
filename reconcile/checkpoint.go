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
// run resumes where it stopped. It is replaced atomically (write, rename).

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
		return nil, fmt.Errorf("reconcile: checkpoint %s: want \"table hexkey\"", path)
	}
	if t != table {
		return nil, nil
	}
	key, err := hex.DecodeString(k)
	if err != nil {
		return nil, fmt.Errorf("reconcile: checkpoint %s: %w", path, err)
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
