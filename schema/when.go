package schema

// Set is the test of a table's `when`: a value is set when it is present
// and not the zero value of its type (absent, "", empty bytes, 0 or
// false). The writer, the cost model and the hotspot simulation all ask it,
// so that they agree on which entities have a row in a partial table.
func Set(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []byte:
		return len(x) > 0
	case bool:
		return x
	case int32:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	}
	return true
}
