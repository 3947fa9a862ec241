//go:build !race

package write

const raceEnabled = false
