package live

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// Plausible times: keys whose leading value falls in these years are read
// as times. Wide enough for any real data, narrow enough that random bytes
// and small ids almost never land in it.
var (
	minTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Lead is what the sample says about the start of the key.
type Lead struct {
	// Salt is the number of distinct values of a leading bucket byte
	// (small binary values such as salt(x, 8) writes); 0 when there is none.
	Salt int
	// Hashed reports a leading binary prefix whose values are spread over
	// most of their range: a hash, which spreads writes.
	Hashed bool
	// Segment describes the first field after any salt: "ascii" text up to
	// Delim, "digits", "int64", "int32" or "" when unknown.
	Segment string
	Delim   byte // the delimiter after an ASCII segment; 0 when none
	Width   int  // bytes of a fixed-width binary segment
	// Time is set when the segment reads as a time in at least timeShare
	// of the sample: how it is encoded, and the range seen.
	Time           string
	Reversed       bool // Long.MAX_VALUE - time: newest first
	Day            bool // a day number, not an instant
	Oldest, Newest time.Time
	// Distinct counts the distinct segment values in the sample, with up
	// to eight of the most common for the message.
	Distinct int
	Top      []string
	Sampled  int
}

// timeShare is the part of the sample that must read as times.
const timeShare = 0.9

// delimiters are the separators seen in delimited ASCII keys.
const delimiters = "#|:;,/_-.\x00"

// AnalyzeKeys infers the lead of a set of row keys. It never fails: keys
// are outside input, so anything it does not recognise leaves fields
// zero.
func AnalyzeKeys(keys [][]byte) Lead {
	l := Lead{Sampled: len(keys)}
	if len(keys) == 0 {
		return l
	}
	rest := keys
	if n, ok := saltByte(keys); ok {
		l.Salt = n
		rest = make([][]byte, 0, len(keys))
		for _, k := range keys {
			rest = append(rest, k[1:])
		}
	} else if hashedPrefix(keys) {
		l.Hashed = true
		return l
	}
	segs := l.segment(rest)
	counts := map[string]int{}
	for _, s := range segs {
		counts[string(s)]++
	}
	l.Distinct = len(counts)
	l.Top = topValues(counts, 8, l.Segment == "ascii" || l.Segment == "digits")
	l.detectTime(segs)
	return l
}

// saltByte reports a first byte that is a small bucket number in every key.
func saltByte(keys [][]byte) (int, bool) {
	seen := map[byte]bool{}
	for _, k := range keys {
		if len(k) < 2 || k[0] >= 0x20 {
			return 0, false
		}
		seen[k[0]] = true
	}
	return len(seen), true
}

// hashedPrefix reports a binary first byte with values spread over most
// of the byte's range: what hash(x, n) writes.
func hashedPrefix(keys [][]byte) bool {
	seen := map[byte]bool{}
	binaryLead := 0
	for _, k := range keys {
		if len(k) == 0 {
			continue
		}
		seen[k[0]] = true
		if k[0] < 0x20 || k[0] >= 0x7f {
			binaryLead++
		}
	}
	// A uniform byte over n samples shows about 256(1-e^(-n/256))
	// distinct values; ask for half of that, and mostly non-text bytes.
	want := 256 * (1 - math.Exp(-float64(len(keys))/256)) / 2
	return len(keys) >= 16 && float64(len(seen)) >= want && binaryLead*4 >= len(keys)
}

// segment cuts the first field off each key and says how it is encoded.
func (l *Lead) segment(keys [][]byte) [][]byte {
	if d, ok := commonDelimiter(keys); ok {
		l.Segment, l.Delim = "ascii", d
		out := make([][]byte, len(keys))
		for i, k := range keys {
			out[i] = k[:bytes.IndexByte(k, d)]
		}
		if allDigits(out) {
			l.Segment = "digits"
		}
		return out
	}
	if allPrintable(keys) {
		out := make([][]byte, len(keys))
		digits := true
		for i, k := range keys {
			n := 0
			for n < len(k) && k[n] >= '0' && k[n] <= '9' {
				n++
			}
			if n == 0 {
				digits = false
			}
			out[i] = k[:n]
		}
		if digits {
			l.Segment = "digits"
			return out
		}
		l.Segment = "ascii"
		return keys
	}
	// Binary: a fixed-width number that reads as a time, else the first
	// 8 bytes (or the whole key) as an opaque value.
	for _, w := range []int{8, 4} {
		if minLen(keys) < w {
			continue
		}
		l.Segment, l.Width = fmt.Sprintf("int%d", w*8), w
		out := prefixes(keys, w)
		if l.timeShare(out) >= timeShare {
			return out
		}
	}
	l.Segment, l.Width, l.Time = "binary", min(8, minLen(keys)), ""
	return prefixes(keys, l.Width)
}

func prefixes(keys [][]byte, w int) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = k[:w]
	}
	return out
}

// commonDelimiter finds a delimiter byte present, after at least one byte
// of printable text, in every key.
func commonDelimiter(keys [][]byte) (byte, bool) {
	for i := 0; i < len(delimiters); i++ {
		d := delimiters[i]
		ok := true
		for _, k := range keys {
			j := bytes.IndexByte(k, d)
			if j <= 0 || !allPrintable([][]byte{k[:j]}) {
				ok = false
				break
			}
		}
		if ok {
			return d, true
		}
	}
	return 0, false
}

func allPrintable(keys [][]byte) bool {
	for _, k := range keys {
		for _, c := range k {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
	}
	return true
}

func allDigits(segs [][]byte) bool {
	for _, s := range segs {
		if len(s) == 0 {
			return false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

func minLen(keys [][]byte) int {
	m := math.MaxInt
	for _, k := range keys {
		m = min(m, len(k))
	}
	return m
}

// timeShare returns the part of the segments that read as times under
// the best encoding, and records that encoding.
func (l *Lead) timeShare(segs [][]byte) float64 {
	type reading struct {
		name     string
		reversed bool
		day      bool
		conv     func([]byte) (time.Time, bool)
	}
	var readings []reading
	switch l.Segment {
	case "digits":
		readings = []reading{
			{name: "epoch milliseconds as decimal text", conv: func(b []byte) (time.Time, bool) {
				v, err := strconv.ParseInt(string(b), 10, 64)
				return time.UnixMilli(v), err == nil && len(b) >= 12 && len(b) <= 13
			}},
			{name: "epoch seconds as decimal text", conv: func(b []byte) (time.Time, bool) {
				v, err := strconv.ParseInt(string(b), 10, 64)
				return time.Unix(v, 0), err == nil && len(b) >= 9 && len(b) <= 10
			}},
			{name: "a yyyymmdd date", day: true, conv: func(b []byte) (time.Time, bool) {
				if len(b) < 8 {
					return time.Time{}, false
				}
				t, err := time.Parse("20060102", string(b[:8]))
				return t, err == nil
			}},
		}
	case "ascii":
		readings = []reading{{name: "an ISO date", day: true, conv: func(b []byte) (time.Time, bool) {
			if len(b) < 10 {
				return time.Time{}, false
			}
			t, err := time.Parse(time.DateOnly, string(b[:10]))
			return t, err == nil
		}}}
	case "int64":
		be := func(b []byte, flip bool) int64 {
			v := binary.BigEndian.Uint64(b)
			if flip {
				v ^= 1 << 63
			}
			return int64(v)
		}
		for _, flip := range []bool{false, true} {
			enc := "a big-endian int64 of epoch milliseconds"
			if flip {
				enc = "an order-preserving int64 of epoch milliseconds (sign bit flipped)"
			}
			readings = append(readings,
				reading{name: enc, conv: func(b []byte) (time.Time, bool) { return time.UnixMilli(be(b, flip)), true }},
				reading{name: "a reversed timestamp (Long.MAX_VALUE - epoch milliseconds)", reversed: true, conv: func(b []byte) (time.Time, bool) {
					return time.UnixMilli(math.MaxInt64 - be(b, flip)), be(b, flip) > 0
				}})
		}
	case "int32":
		readings = []reading{
			{name: "an order-preserving int32 day number", day: true, conv: func(b []byte) (time.Time, bool) {
				d := int32(binary.BigEndian.Uint32(b) ^ 1<<31)
				return time.Unix(int64(d)*86400, 0), true
			}},
		}
	}
	best := 0.0
	for _, r := range readings {
		n := 0
		var lo, hi time.Time
		for _, s := range segs {
			t, ok := r.conv(s)
			if !ok || t.Before(minTime) || !t.Before(maxTime) {
				continue
			}
			if n == 0 || t.Before(lo) {
				lo = t
			}
			if n == 0 || t.After(hi) {
				hi = t
			}
			n++
		}
		share := float64(n) / float64(len(segs))
		if share > best {
			best = share
			if share >= timeShare {
				l.Time, l.Reversed, l.Day, l.Oldest, l.Newest = r.name, r.reversed, r.day, lo.UTC(), hi.UTC()
			}
		}
	}
	return best
}

func (l *Lead) detectTime(segs [][]byte) {
	if l.Time == "" && len(segs) > 0 {
		l.timeShare(segs)
	}
}

// topValues lists the commonest values, most common first, as text when
// they are text and in hex otherwise.
func topValues(counts map[string]int, n int, text bool) []string {
	type vc struct {
		v string
		c int
	}
	var all []vc
	for v, c := range counts {
		all = append(all, vc{v, c})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].c != all[j].c {
			return all[i].c > all[j].c
		}
		return all[i].v < all[j].v
	})
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		v := all[i].v
		if !text {
			v = fmt.Sprintf("%x", v)
		}
		out = append(out, fmt.Sprintf("%s (%d)", v, all[i].c))
	}
	return out
}
