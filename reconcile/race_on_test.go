//go:build race

package reconcile

// raceEnabled: the fault round trips (every kind of fault, found by every
// way to run the job, then repaired) take minutes under the race detector;
// scripts/test.sh runs them without it, after the race-enabled run, whose
// own concurrency tests (TestConcurrentWriterAndRepair and the rest) cover
// the job's goroutines.
const raceEnabled = true
