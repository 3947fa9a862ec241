package pebble

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockHolder finds the process holding the POSIX lock on dir/LOCK in
// /proc/locks (Pebble's LOCK file itself is empty). ok is false when no
// lock on that file is listed; pid is 0 when one is but names no process.
func lockHolder(dir string) (pid int, ok bool) {
	fi, err := os.Stat(filepath.Join(dir, "LOCK"))
	if err != nil {
		return 0, false
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	// Lines read "1: POSIX  ADVISORY  WRITE 4242 08:01:1234567 0 EOF":
	// the pid, then major:minor:inode of the locked file.
	want := fmt.Sprintf(":%d", st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" {
			continue
		}
		if !strings.HasSuffix(fields[5], want) || strings.Count(fields[5], ":") != 2 {
			continue
		}
		n, err := strconv.Atoi(fields[4])
		if err != nil || n <= 0 {
			return 0, true
		}
		return n, true
	}
	return 0, false
}
