package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// results is the answer of the gateway's calls that return rows
// (get, getMultiple, getScannerResults, getScannerRows), decoded straight
// into store rows. The generated code makes, per cell, a TColumnValue, a
// timestamp pointer and a bytes.Buffer and a byte slice for each of the
// family, qualifier and value, which then had to be copied into store
// cells with the family made a string once more: about fifteen
// allocations a cell, on every row the writer reads. Here a row's key,
// qualifiers and values are cut from shared byte arrays, its cells from
// one shared cell array, and a family name is made once per answer.
//
// Invariants: every slice handed out is capped at its length, so appending
// to one never writes into another; nothing is reused after Read returns,
// so the rows stay valid as long as the caller holds them (and keep their
// arrays alive with them). Rows equal the generated code's answer, field
// for field (TestResultsAsGenerated, FuzzResults). HBase sends a row's
// cells in the store's order (family, qualifier, timestamp descending).
type results struct {
	rows []store.Row
	// single is set for get, whose field 0 is one TResult where the other
	// calls answer a list; wantIA for the calls that declare a
	// TIllegalArgument (field 2). A field of the shape the call does not
	// declare is skipped, as the generated code skips it.
	single bool
	wantIA bool
	// io and ia are the exceptions the call declares.
	io *hbase2.TIOError
	ia *hbase2.TIllegalArgument

	buf   []byte       // bytes of keys, qualifiers and values
	cells []store.Cell // cells of the rows
	fams  []string     // family names met so far
}

var _ thrift.TStruct = (*results)(nil)

// arrays are never bigger than this at the start: a hostile length must
// not allocate before its bytes arrive.
const (
	resultsBufMin   = 4 << 10
	resultsBufMax   = 1 << 20
	resultsCellsMax = 1 << 14
)

// callRows makes a call that answers rows, decoded into res (which says
// what the call declares), and returns them, or the call's declared
// exception as its error.
func callRows(ctx context.Context, c *hbase2.THBaseServiceClient, method string, args thrift.TStruct, res *results) ([]store.Row, error) {
	if _, err := c.Client_().Call(ctx, method, args, res); err != nil {
		return nil, err
	}
	switch {
	case res.io != nil:
		return nil, res.io
	case res.ia != nil:
		return nil, res.ia
	}
	return res.rows, nil
}

func (r *results) Write(context.Context, thrift.TProtocol) error {
	return errors.New("hbase: an answer of rows is only ever read")
}

// Read decodes the call's result struct: field 0 the rows (a list, or for
// get a single TResult), field 1 a TIOError, field 2 a TIllegalArgument
// where the call declares one.
func (r *results) Read(ctx context.Context, p thrift.TProtocol) error {
	return readStruct(ctx, p, func(id int16, typ thrift.TType) (bool, error) {
		switch {
		case id == 0 && typ == thrift.LIST && !r.single:
			return true, r.readRows(ctx, p)
		case id == 0 && typ == thrift.STRUCT && r.single:
			row, err := r.readResult(ctx, p)
			if err == nil {
				r.rows = append(r.rows[:0], row)
			}
			return true, err
		case id == 1 && typ == thrift.STRUCT:
			r.io = hbase2.NewTIOError()
			return true, r.io.Read(ctx, p)
		case id == 2 && typ == thrift.STRUCT && r.wantIA:
			r.ia = hbase2.NewTIllegalArgument()
			return true, r.ia.Read(ctx, p)
		}
		return false, nil
	})
}

// readStruct reads a struct's fields one by one: field reads those it
// knows and reports so, and the others are skipped, as the generated code
// skips unknown fields and known ones of another type. field does not
// escape, so a closure passed as field costs no allocation.
func readStruct(ctx context.Context, p thrift.TProtocol, field func(id int16, typ thrift.TType) (bool, error)) error {
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return err
	}
	for {
		_, typ, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return err
		}
		if typ == thrift.STOP {
			break
		}
		known, err := field(id, typ)
		if err == nil && !known {
			err = p.Skip(ctx, typ)
		}
		if err != nil {
			return err
		}
		if err := p.ReadFieldEnd(ctx); err != nil {
			return err
		}
	}
	return p.ReadStructEnd(ctx)
}

// readRows decodes a list<TResult>.
func (r *results) readRows(ctx context.Context, p thrift.TProtocol) error {
	_, n, err := p.ReadListBegin(ctx)
	if err != nil {
		return err
	}
	if n < 0 {
		return thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("list of %d results", n))
	}
	r.rows = make([]store.Row, 0, min(n, resultsCellsMax))
	for range n {
		row, err := r.readResult(ctx, p)
		if err != nil {
			return err
		}
		r.rows = append(r.rows, row)
	}
	return p.ReadListEnd(ctx)
}

// readResult decodes one TResult: 1 row, 2 columnValues (required), 3
// stale and 4 partial, which the store does not use.
func (r *results) readResult(ctx context.Context, p thrift.TProtocol) (store.Row, error) {
	var row store.Row
	haveCells := false
	err := readStruct(ctx, p, func(id int16, typ thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 1 && typ == thrift.STRING:
			row.Key, err = r.binary(ctx, p)
		case id == 2 && typ == thrift.LIST:
			haveCells = true
			row.Cells, err = r.readCells(ctx, p)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return row, err
	}
	if !haveCells {
		return row, thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("TResult without its required columnValues"))
	}
	// The key may come after the cells.
	for i := range row.Cells {
		row.Cells[i].Row = row.Key
	}
	return row, nil
}

// readCells decodes a list<TColumnValue>: 1 family, 2 qualifier and 3
// value (all required), 4 timestamp; 5 tags and 6 type are skipped. An
// empty list is nil cells.
func (r *results) readCells(ctx context.Context, p thrift.TProtocol) ([]store.Cell, error) {
	_, n, err := p.ReadListBegin(ctx)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("list of %d column values", n))
	}
	if cap(r.cells)-len(r.cells) < n {
		// A new array, not a grown one: the rows before keep theirs.
		r.cells = make([]store.Cell, 0, min(max(n, 2*cap(r.cells), 64), resultsCellsMax))
	}
	start := len(r.cells)
	for range n {
		c, err := r.readCell(ctx, p)
		if err != nil {
			return nil, err
		}
		r.cells = append(r.cells, c)
	}
	if err := p.ReadListEnd(ctx); err != nil {
		return nil, err
	}
	if len(r.cells) == start {
		return nil, nil
	}
	return r.cells[start:len(r.cells):len(r.cells)], nil
}

func (r *results) readCell(ctx context.Context, p thrift.TProtocol) (store.Cell, error) {
	var c store.Cell
	var fam []byte
	var haveFam, haveQual, haveVal bool
	err := readStruct(ctx, p, func(id int16, typ thrift.TType) (bool, error) {
		var err error
		switch {
		case id == 1 && typ == thrift.STRING:
			fam, err = r.binary(ctx, p)
			haveFam = true
		case id == 2 && typ == thrift.STRING:
			c.Qualifier, err = r.binary(ctx, p)
			haveQual = true
		case id == 3 && typ == thrift.STRING:
			c.Value, err = r.binary(ctx, p)
			haveVal = true
		case id == 4 && typ == thrift.I64:
			c.Timestamp, err = p.ReadI64(ctx)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return c, err
	}
	if !haveFam || !haveQual || !haveVal {
		return c, thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("TColumnValue without its required family, qualifier or value"))
	}
	c.Family = r.family(fam)
	c.Qualifier, c.Value = nonNil(c.Qualifier), nonNil(c.Value)
	return c, nil
}

// family returns the name of family b, made a string once per answer: a
// table has a few families, and every cell names one.
func (r *results) family(b []byte) string {
	for _, f := range r.fams {
		if f == string(b) {
			return f
		}
	}
	f := string(b)
	r.fams = append(r.fams, f)
	return f
}

// binary reads a binary field as ReadBinary does, into the shared bytes
// when the protocol is the binary one (whose transport is the stream
// itself: reading from it directly takes exactly the field's bytes). An
// empty field is empty, not nil, as ReadBinary returns it.
func (r *results) binary(ctx context.Context, p thrift.TProtocol) ([]byte, error) {
	bp, ok := p.(*thrift.TBinaryProtocol)
	if !ok {
		return p.ReadBinary(ctx)
	}
	n, err := bp.ReadI32(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case n < 0:
		return nil, thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("negative size: %d", n))
	case n == 0:
		return []byte{}, nil
	case n > resultsBufMax:
		// Read as it arrives, not allocated up front from the length.
		var b bytes.Buffer
		_, err := io.CopyN(&b, bp.Transport(), int64(n))
		return b.Bytes(), thrift.NewTProtocolException(err)
	}
	if cap(r.buf)-len(r.buf) < int(n) {
		r.buf = make([]byte, 0, min(max(int(n), 2*cap(r.buf), resultsBufMin), resultsBufMax))
	}
	start := len(r.buf)
	end := start + int(n)
	r.buf = r.buf[:end]
	if _, err := io.ReadFull(bp.Transport(), r.buf[start:end]); err != nil {
		r.buf = r.buf[:start]
		return nil, thrift.NewTProtocolException(err)
	}
	return r.buf[start:end:end], nil
}
