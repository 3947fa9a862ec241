// Package layout is where each piece of an entity lives in the store: the
// cells of its primary row, the rows it derives in index, lookup and counter
// tables, and the byte encodings of values in cells. The writer, the reader
// and the reconcile job all go through it, so that what one writes the others
// read back and recompute identically.
//
// Invariants:
//   - Derive is a pure function of (plan, entity state): the same state gives
//     the same rows, cells and order, byte for byte. Reconcile depends on it.
//   - Qualifiers that start with 0x00 are bookkeeping (Pending, Tombstone);
//     schema qualifiers never do.
package layout
