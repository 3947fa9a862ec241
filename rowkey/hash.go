package rowkey

import (
	"crypto/md5"
	"hash/fnv"
)

// The two hashes below are part of the stored data: changing either moves
// every existing row to a different key. They read the field's own
// order-preserving encoding (AppendValue), so the bucket of "c4" is the same
// whatever key the field appears in.

// SaltBucket is FNV-1a 32-bit of the encoded field, modulo n.
func SaltBucket(encoded []byte, n int) byte {
	h := fnv.New32a()
	h.Write(encoded)
	return byte(h.Sum32() % uint32(n))
}

// HashPrefix is the first n bytes of the MD5 digest of the encoded field.
// MD5 is used for spread, not for security.
func HashPrefix(encoded []byte, n int) []byte {
	sum := md5.Sum(encoded)
	out := make([]byte, n)
	copy(out, sum[:n])
	return out
}
