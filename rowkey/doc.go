// Package rowkey builds composite HBase row keys whose byte order matches the
// order of their parts.
//
// A key is a list of parts, written in a schema as expressions:
//
//	["customerId", "reverse(placedAt)", "orderId"]
//	["salt(orderId, 8)", "status", "reverse(placedAt)", "orderId"]
//	["day(placedAt)", "items.sku"]
//	["hash(deviceId, 2)", "deviceId", "reverse(ts)"]
//
// Every part encodes to bytes such that comparing two keys as unsigned bytes
// (as HBase does) compares their parts in turn. Variable-length parts
// (strings, bytes) are escaped and terminated, so no encoding is a prefix of
// another's: a prefix scan for customer "c4" never returns customer "c42".
//
// The hash functions behind salt and hash are part of the on-disk format and
// must never change: salt uses FNV-1a 32-bit, hash uses MD5; both read the
// field's own part encoding (see hash.go).
package rowkey
