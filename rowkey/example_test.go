package rowkey_test

import (
	"fmt"

	"github.com/denorm/denorm/rowkey"
)

func Example() {
	types := map[string]rowkey.Type{"orderId": rowkey.String, "status": rowkey.String, "placedAt": rowkey.Timestamp}
	spec, err := rowkey.Parse([]string{"salt(orderId, 8)", "status", "reverse(placedAt)", "orderId"},
		func(f string) (rowkey.Type, bool) { t, ok := types[f]; return t, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := spec.Encode(rowkey.Values{"orderId": "o1", "status": "OPEN", "placedAt": int64(1764460800000)})
	if err != nil {
		fmt.Println(err)
		return
	}
	back, _ := spec.DecodeValues(key)
	fmt.Println(back["orderId"], back["status"], back["placedAt"])

	// Listing OPEN orders without an order id means scanning every bucket.
	ranges, _ := spec.PrefixBounds(rowkey.Values{"status": "OPEN"})
	fmt.Println(len(ranges), "ranges")
	// Output:
	// o1 OPEN 1764460800000
	// 8 ranges
}
