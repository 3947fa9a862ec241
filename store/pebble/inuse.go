package pebble

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrInUse: another process has the store's directory open. Pebble takes
// an exclusive lock on the directory's LOCK file, so the embedded store
// serves one process at a time.
var ErrInUse = errors.New("the embedded store is in use by another process")

// InUseError names the directory and, where the system tells, the process
// holding it.
type InUseError struct {
	Dir string
	PID int // 0 when unknown
}

func (e *InUseError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("another process (pid %d)", e.PID)
	}
	return fmt.Sprintf("the embedded store in %s is in use by %s: it serves one process at a time "+
		"(stop the other process, or use hbase:// for several processes on one store)", e.Dir, who)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// inUse turns Pebble's failure to take the directory lock into an
// InUseError; other errors pass through unchanged.
func inUse(dir string, err error) error {
	// fcntl's F_SETLK fails with EAGAIN (EWOULDBLOCK on some systems)
	// when another process holds the lock.
	if !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK) {
		return err
	}
	pid, _ := lockHolder(dir)
	return &InUseError{Dir: dir, PID: pid}
}
