package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseSince reads a --since value: an age counted back from now ("36h",
// "7d", "2w", or any Go duration), a day ("2026-11-01", UTC midnight), or an
// RFC 3339 time. Ages must be positive; a time may not lie in the future.
func parseSince(v string, now time.Time) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("--since %q: want an age like 36h, 7d or 2w, a day like 2026-11-01, or an RFC 3339 time", v)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return bad()
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return checkPast(v, t, now)
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return checkPast(v, t, now)
	}
	var age time.Duration
	if unit := v[len(v)-1]; unit == 'd' || unit == 'w' {
		n, err := strconv.ParseInt(v[:len(v)-1], 10, 32)
		if err != nil || n <= 0 {
			return bad()
		}
		day := 24 * time.Hour
		if unit == 'w' {
			day *= 7
		}
		// Capped so the product cannot overflow: 2^31 days is beyond any
		// key a schema can encode anyway.
		if n > int64(maxAge/day) {
			return time.Time{}, fmt.Errorf("--since %q: too long ago", v)
		}
		age = time.Duration(n) * day
	} else {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return bad()
		}
		age = d
	}
	return now.Add(-age), nil
}

// maxAge bounds --since ages (about 290 years fit in a Duration).
const maxAge = 200 * 365 * 24 * time.Hour

func checkPast(v string, t, now time.Time) (time.Time, error) {
	if t.After(now) {
		return time.Time{}, fmt.Errorf("--since %q: lies in the future", v)
	}
	return t, nil
}
