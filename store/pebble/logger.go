package pebble

import pdb "github.com/cockroachdb/pebble/v2"

// quietLogger keeps Pebble's errors and fatal messages and drops its routine
// information lines (WAL replay, compactions), which a library must not
// print on its caller's stderr.
type quietLogger struct{ pdb.Logger }

func (quietLogger) Infof(string, ...interface{}) {}
