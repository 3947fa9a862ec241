package review

import (
	"fmt"

	"github.com/denorm/denorm/schema"
)

// Fan-out sizes that grade fanout-amplification.
const (
	fanoutWarnRate  = 10_000.0  // row writes per second
	fanoutErrorRate = 100_000.0 // row writes per second
	fanoutWarnBurst = 100_000   // rows one event can write
	fanoutErrBurst  = 1_000_000
)

// checkFanout prices a fan-out on write: events times the typical list,
// and the longest list as the burst of a single event.
func checkFanout(r *reviewer) {
	for _, t := range r.plan.Tables {
		fo := t.Fanout
		if t.Role != schema.RoleFanout || fo == nil {
			continue
		}
		rate := r.plan.WritesPerSecond(t)
		var sev Severity
		switch {
		case rate >= fanoutErrorRate || fo.Max >= fanoutErrBurst:
			sev = SeverityError
		case rate >= fanoutWarnRate || fo.Max >= fanoutWarnBurst:
			sev = SeverityWarning
		default:
			continue
		}
		r.addSev("fanout-amplification", sev, at{table: t.Name, line: firstLine(fo.Line, t.Line)}, fmt.Sprintf(
			"fanout table %s copies every %s into each element of %s.%s: about %.0f row writes/s (%.0f events/s times a typical %d), and one event can write up to %d rows",
			t.Name, t.Entity, fo.Entity, fo.List, rate, r.plan.EventsPerSecond(t.Entity)*r.plan.WhenShare(t), fo.Typical, fo.Max))
	}
}
