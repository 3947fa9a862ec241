// Package live reviews a table that already exists, with no schema file:
// it describes the table (families and their settings, regions), samples
// row keys (the first keys of each region and a bounded scan from the
// start), infers what the bytes allow (a time or sequence leading the key,
// a low number of distinct leading values, how the sample falls into the
// regions) and reports findings under the catalogue's rule ids, with the
// evidence in each message. Draft writes a starting schema from what was
// seen.
//
// What cannot be seen is not guessed: write rates, queries and client
// settings live outside the table, so the rules about them stay silent.
// Memory is bounded by the sample size, never by the table's.
package live
