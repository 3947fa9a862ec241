package review

import (
	"fmt"
	"strings"
	"time"
)

// humanBytes renders a byte count in binary units, as HBase settings are.
// humanBytesF is humanBytes of a float, for sizes that are products of
// schema values and may pass int64's range.
func humanBytesF(f float64) string {
	switch {
	case f >= 1<<60:
		return fmt.Sprintf("%.3g EiB", f/(1<<60))
	case f >= 1<<40:
		return fmt.Sprintf("%.1f TiB", f/(1<<40))
	}
	return humanBytes(int64(f))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// humanDuration renders whole days as "90d" and trims the zero units Go
// prints ("24h0m0s" becomes "24h").
func humanDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
