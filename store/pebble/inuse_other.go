//go:build !linux

package pebble

// lockHolder is known only on Linux, from /proc/locks.
func lockHolder(string) (int, bool) { return 0, false }
