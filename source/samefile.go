package source

import (
	"os"
	"path/filepath"
)

// SameFile reports whether two paths name one file, after resolving links
// and relative parts. A path that does not exist yet is compared by its
// resolved directory and name, so a dead-letter file about to be created
// is still recognised as the events file it would overwrite.
func SameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(ia, ib)
	}
	ra, rb := resolved(a), resolved(b)
	return ra != "" && ra == rb
}

// resolved is a path with its directory's links resolved, "" when that
// cannot be done.
func resolved(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return ""
	}
	return filepath.Join(dir, filepath.Base(abs))
}
