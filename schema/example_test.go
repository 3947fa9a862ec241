package schema_test

import (
	"fmt"

	"github.com/denorm/denorm/schema"
)

func ExampleParse() {
	_, err := schema.Parse("bad.yaml", []byte(`entities:
  order:
    key: orderId
    fields: {orderId: string, status: string}
tables:
  orders_by_status:
    role: index
    entity: order
    rowkey: [status]
`))
	fmt.Println(err)
	// Output:
	// bad.yaml:6: tables.orders_by_status: entity "order" has copies but no primary table to be their source of truth
	// bad.yaml:9: tables.orders_by_status.rowkey: the index key does not contain the entity key "orderId", so it cannot be unique: two orders would share one row
}
