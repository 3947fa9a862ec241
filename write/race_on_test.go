//go:build race

package write

// The race detector slows the convergence property about tenfold; its
// default size shrinks to match. CI runs it at full size without -race too.
const raceEnabled = true
