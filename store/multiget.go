package store

import (
	"context"
	"fmt"
)

// MultiGetter is implemented by backends that read many rows of a table in
// one call: one getMultiple round trip on HBase, one iterator seeking
// through the rows in key order on the embedded store. Callers use the
// package function GetMany, which falls back to Get for backends (and
// wrappers) without it.
type MultiGetter interface {
	// GetMany reads one row per Get and returns them in the order of gets,
	// with the semantics of Get for each: a missing row (or one with nothing
	// selected) is a Row with no cells whose Key is the Get's Row. The rows
	// belong to the caller. The call fails as a whole, with no rows, when
	// any read fails; its error wraps the store error (ErrTableNotFound,
	// ErrFamilyNotFound, ErrRowTooBig, ErrClosed, the context's).
	//
	// Each row is read atomically, as by Get; rows are not read at one
	// instant unless the backend says so.
	GetMany(ctx context.Context, table string, gets []Get) ([]Row, error)
}

// GetMany reads the rows of gets from table, one Row per Get in the order
// of gets (see MultiGetter for what each holds). It uses st's GetMany when
// st has one and otherwise calls Get once per row, in order, stopping at the
// first error. With no gets it returns an empty slice without calling st.
//
// The caller bounds len(gets): every row is held in memory at once. A Get
// may repeat a row; each Get has its own Row.
func GetMany(ctx context.Context, st Store, table string, gets []Get) ([]Row, error) {
	if len(gets) == 0 {
		return []Row{}, nil
	}
	if mg, ok := st.(MultiGetter); ok {
		return mg.GetMany(ctx, table, gets)
	}
	rows := make([]Row, len(gets))
	for i, g := range gets {
		row, err := st.Get(ctx, table, g)
		if err != nil {
			return nil, fmt.Errorf("get %d rows of %s: row %d: %w", len(gets), table, i, err)
		}
		rows[i] = row
	}
	return rows, nil
}
