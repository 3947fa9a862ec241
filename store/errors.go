package store

import (
	"errors"
	"fmt"
)

var (
	// ErrTableNotFound: the table does not exist.
	ErrTableNotFound = errors.New("table not found")
	// ErrTableExists: CreateTable found a table of that name.
	ErrTableExists = errors.New("table already exists")
	// ErrFamilyNotFound: a mutation or read named a family the table lacks.
	ErrFamilyNotFound = errors.New("column family not found")
	// ErrRowTooBig: a read met a row larger than the maximum row size
	// (HBase's RowTooBigException).
	ErrRowTooBig = errors.New("row too big")
	// ErrCellTooBig: a mutation carried a cell over the maximum cell size.
	ErrCellTooBig = errors.New("cell too big")
	// ErrUnsupported: the backend cannot do this. Backends say so rather than
	// approximate.
	ErrUnsupported = errors.New("not supported by this backend")
	// ErrClosed: the store or mutator was closed.
	ErrClosed = errors.New("store closed")
)

// CellTooBigError names the cell a mutation was refused for. It matches
// ErrCellTooBig with errors.Is.
type CellTooBigError struct {
	Table     string
	Row       []byte
	Family    string
	Qualifier []byte
	Size      int
	Limit     int
}

func (e *CellTooBigError) Error() string {
	return fmt.Sprintf("cell too big: table %s row %s column %s:%s is %d bytes, over the limit of %d",
		e.Table, Printable(e.Row), e.Family, Printable(e.Qualifier), e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrCellTooBig) true.
func (e *CellTooBigError) Is(target error) bool { return target == ErrCellTooBig }

// RowTooBigError names the row a read was refused for. It matches
// ErrRowTooBig with errors.Is.
type RowTooBigError struct {
	Table string
	Row   []byte
	Limit int
}

func (e *RowTooBigError) Error() string {
	return fmt.Sprintf("row too big: table %s row %s is larger than the maximum row size of %d bytes",
		e.Table, Printable(e.Row), e.Limit)
}

// Is makes errors.Is(err, ErrRowTooBig) true.
func (e *RowTooBigError) Is(target error) bool { return target == ErrRowTooBig }

// ErrBadURL: a store URL that no backend can take (a wrong host, path or
// parameter). It is the caller's mistake, unlike a store that fails to
// open, so commands treat it as an input error.
var ErrBadURL = errors.New("bad store URL")

// BadURLError marks a backend's complaint about its URL. It reads as the
// complaint and matches ErrBadURL with errors.Is.
type BadURLError struct{ Err error }

func (e *BadURLError) Error() string { return e.Err.Error() }

// Unwrap gives the backend's complaint.
func (e *BadURLError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrBadURL) true.
func (e *BadURLError) Is(target error) bool { return target == ErrBadURL }
