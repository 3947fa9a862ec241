package hbase

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// serverMessage returns the text of an error the gateway sent, and whether
// err is one.
func serverMessage(err error) (string, bool) {
	var ioe *hbase2.TIOError
	if errors.As(err, &ioe) {
		return ioe.GetMessage(), true
	}
	var iae *hbase2.TIllegalArgument
	if errors.As(err, &iae) {
		return iae.GetMessage(), true
	}
	var ae thrift.TApplicationException
	if errors.As(err, &ae) {
		return ae.Error(), true
	}
	return "", false
}

var maxRowSizeRE = regexp.MustCompile(`Max row size allowed: (\d+)`)

// classify maps what the gateway said to the store's errors by the Java
// exception text. It returns nil when the text names nothing it knows; the
// caller may then ask the server (see Store.explain).
func classify(table string, row []byte, msg string) error {
	switch {
	case strings.Contains(msg, "TableNotFoundException"):
		return store.ErrTableNotFound
	case strings.Contains(msg, "TableExistsException"):
		return store.ErrTableExists
	case strings.Contains(msg, "NoSuchColumnFamilyException"),
		strings.Contains(msg, "Column family") && strings.Contains(msg, "does not exist"):
		return store.ErrFamilyNotFound
	case strings.Contains(msg, "RowTooBigException"), strings.Contains(msg, "Max row size allowed"):
		e := &store.RowTooBigError{Table: table, Row: row}
		if m := maxRowSizeRE.FindStringSubmatch(msg); m != nil {
			e.Limit, _ = strconv.Atoi(m[1]) // the pattern admits only digits
		}
		return e
	case strings.Contains(msg, "KeyValue size too large"),
		strings.Contains(msg, "exceeds limit of") && strings.Contains(msg, "size"):
		return store.ErrCellTooBig
	}
	return nil
}

// wrapServer wraps a gateway error with what was being done and, where the
// text allows, the store error it means; the original text is kept.
func wrapServer(what string, sentinel error, err error) error {
	if msg, ok := serverMessage(err); ok {
		err = &serverError{msg: msg, err: err}
	}
	if sentinel == nil {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	return fmt.Errorf("hbase: %s: %w (server said: %v)", what, sentinel, err)
}

// serverError shows what the gateway said (the generated Thrift types print
// pointers) and keeps the original error for errors.As.
type serverError struct {
	msg string
	err error
}

func (e *serverError) Error() string {
	msg, _, _ := strings.Cut(e.msg, "\n\tat ") // the Java stack trace adds nothing here
	if len(msg) > 2000 {
		msg = msg[:2000] + "..."
	}
	return msg
}

func (e *serverError) Unwrap() error { return e.err }

// checkCells refuses a mutation carrying a cell over the limit, naming it,
// before anything is sent.
func checkCells(table string, m store.RowMutation, limit int) error {
	for _, x := range m.Mutations {
		if x.Kind != store.Put {
			continue
		}
		if n := store.CellSize(m.Row, x.Family, x.Qualifier, x.Value); n > limit {
			return &store.CellTooBigError{Table: table, Row: m.Row, Family: x.Family, Qualifier: x.Qualifier, Size: n, Limit: limit}
		}
	}
	return nil
}
