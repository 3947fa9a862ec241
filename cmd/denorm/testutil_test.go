package main

import (
	"context"
	"os"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store/pebble"
)

// ordersStore loads the orders example and opens an embedded store at dir
// with its tables made, for a test to fill before it runs denorm there.
func ordersStore(t *testing.T, ctx context.Context, dir string) (*schema.Plan, *pebble.Store) {
	t.Helper()
	sp, err := schema.Load(ordersSchema)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pebble.Open(ctx, dir, pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ddl.Create(ctx, st, sp); err != nil {
		t.Fatal(err)
	}
	return sp, st
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
