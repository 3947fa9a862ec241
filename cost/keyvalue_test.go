package cost

import "testing"

// A 32-byte row key, family "d", an 8-byte qualifier and an 8-byte value
// take 69 bytes to store 8 bytes of data.
func TestCellBytesWorkedExample(t *testing.T) {
	if got := CellBytes(32, len("d"), 8, 8); got != 69 {
		t.Fatalf("CellBytes(32, 1, 8, 8) = %d, want 69", got)
	}
}

func TestCellBytesGrowsByteForByte(t *testing.T) {
	base := CellBytes(10, 1, 1, 1)
	for _, c := range []struct {
		name string
		got  int
	}{
		{"row", CellBytes(11, 1, 1, 1)},
		{"family", CellBytes(10, 2, 1, 1)},
		{"qualifier", CellBytes(10, 1, 2, 1)},
		{"value", CellBytes(10, 1, 1, 2)},
	} {
		if c.got != base+1 {
			t.Errorf("one more %s byte: %d, want %d", c.name, c.got, base+1)
		}
	}
	if CellBytes(0, 0, 0, 0) != KeyValueFixed || KeyValueFixed != 20 {
		t.Errorf("empty cell = %d, want 20", CellBytes(0, 0, 0, 0))
	}
}
