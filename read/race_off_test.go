//go:build !race

package read

const raceEnabled = false
