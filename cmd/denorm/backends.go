package main

// Backends register their URL schemes with store.Register from their init
// functions; importing them here is what makes --store accept the scheme.
import (
	_ "github.com/denorm/denorm/store/hbase"
	_ "github.com/denorm/denorm/store/pebble"
)
