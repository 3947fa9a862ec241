//go:build race

package read

// raceEnabled: the randomized histories of TestReadRepairConverges run a
// few under the race detector (the reads' concurrency is what it checks
// there), and in full in the run without it (scripts/test.sh).
const raceEnabled = true
