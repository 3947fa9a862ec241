package doctor

import (
	"fmt"
	"strings"
)

// unbatchedFindings looks for tables written one row per call: the region
// server's per-table operation counts (sub=TableLatencies) tell single
// Mutate calls (putTime, deleteTime) from batched Multi calls
// (putBatchTime, deleteBatchTime). A rate needs an interval, so a saved
// file, whose counts are totals since the server started, is not judged.
func unbatchedFindings(s Sample, opts Options) []Finding {
	if s.Before == nil || s.Interval <= 0 {
		return nil
	}
	secs := s.Interval.Seconds()
	var fs []Finding
	for _, t := range sortedKeys(s.After.Tables) {
		if strings.HasPrefix(t, "hbase:") {
			continue
		}
		after := s.After.Tables[t]
		before := s.Before.Tables[t]
		if before == nil {
			before = map[string]float64{} // the table appeared during the interval
		}
		puts := counter(before, after, "putTime_num_ops")
		deletes := counter(before, after, "deleteTime_num_ops")
		batches := counter(before, after, "putBatchTime_num_ops") + counter(before, after, "deleteBatchTime_num_ops")
		singles := puts + deletes
		// Some single writes are normal; ten to one against batches at a
		// steady rate is a writer that never batches.
		if singles < opts.MinRequests || singles/secs < opts.UnbatchedRate || singles < 10*batches {
			continue
		}
		fs = append(fs, newFinding("puts-unbatched", t, "", s.After.Server,
			fmt.Sprintf("%s took %.0f single-row writes %s (%.0f a second) against %.0f batch calls", t, singles, window(s), singles/secs, batches),
			[]string{fmt.Sprintf("putTime_num_ops %.0f, deleteTime_num_ops %.0f, putBatchTime_num_ops + deleteBatchTime_num_ops %.0f %s", puts, deletes, batches, window(s))}))
	}
	return fs
}
