// Package cost estimates what a schema costs on disk: bytes per logical
// record from HBase's KeyValue layout, and measured on a real store.
package cost

// KeyValueFixed is the bytes every cell carries besides its row, family,
// qualifier and value: key length (4), value length (4), row length (2),
// family length (1), timestamp (8) and type (1).
const KeyValueFixed = 4 + 4 + 2 + 1 + 8 + 1

// CellBytes is the size of one KeyValue before block encoding and
// compression.
func CellBytes(row, family, qualifier, value int) int {
	return KeyValueFixed + row + family + qualifier + value
}
