package read

import (
	"fmt"
	"strconv"
	"time"

	"github.com/denorm/denorm/rowkey"
)

// parseText reads a value typed on a command line or in a URL.
func parseText(t rowkey.Type, s string) (any, error) {
	switch t {
	case rowkey.String:
		return s, nil
	case rowkey.Bytes:
		return []byte(s), nil
	case rowkey.Int32:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not an int32", s)
		}
		return int32(n), nil
	case rowkey.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an int64", s)
		}
		return n, nil
	case rowkey.Timestamp:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither RFC 3339 nor epoch milliseconds", s)
		}
		return tm.UnixMilli(), nil
	case rowkey.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a bool", s)
		}
		return b, nil
	case rowkey.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	}
	return nil, fmt.Errorf("unsupported type %v", t)
}
