package main

import (
	"fmt"
	"strings"

	"github.com/denorm/denorm/store"
)

// parseColumn reads "fam" (the whole family) or "fam:qual" (one column; an
// empty qualifier is allowed, as in HBase). The qualifier may carry \xNN
// escapes; the family may not, since HBase family names are printable.
func parseColumn(s string) (store.Column, error) {
	fam, qual, hasQual := strings.Cut(s, ":")
	if err := checkFamilyName(fam); err != nil {
		return store.Column{}, fmt.Errorf("column %q: %w", s, err)
	}
	c := store.Column{Family: fam}
	if hasQual {
		q, err := store.ParsePrintable(qual)
		if err != nil {
			return store.Column{}, fmt.Errorf("column %q: qualifier: %w", s, err)
		}
		c.Qualifier = q // non-nil even when empty: one column, not the family
	}
	return c, nil
}

// parseColumns reads every --column value.
func parseColumns(ss []string) ([]store.Column, error) {
	var out []store.Column
	for _, s := range ss {
		c, err := parseColumn(s)
		if err != nil {
			return nil, usageError(err)
		}
		out = append(out, c)
	}
	return out, nil
}

// parseKey reads a row key (or value) given in the HBase shell's printable
// form; what is read is an input error when malformed.
func parseKey(what, s string) ([]byte, error) {
	b, err := store.ParsePrintable(s)
	if err != nil {
		return nil, usageErrorf("%s: %w", what, err)
	}
	return b, nil
}

// maxRowKey is HBase's limit on a row key's length (Short.MAX_VALUE); a
// longer key is refused by every backend, so it is refused here first.
const maxRowKey = 32767

// parseRow reads a row key argument: printable form, not empty, within
// HBase's limit. Any of those wrong is an input error.
func parseRow(what, s string) ([]byte, error) {
	b, err := parseKey(what, s)
	if err != nil {
		return nil, err
	}
	switch {
	case len(b) == 0:
		return nil, usageErrorf("%s: the row key is empty", what)
	case len(b) > maxRowKey:
		return nil, usageErrorf("%s: the row key is %d bytes, over HBase's limit of %d", what, len(b), maxRowKey)
	}
	return b, nil
}
