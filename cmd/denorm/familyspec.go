package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/denorm/denorm/store"
)

// Settings HBase accepts for a family, upper case. The embedded store only
// records them, so a typo would otherwise go unnoticed until HBase refused
// the table.
var (
	compressions = []string{"NONE", "SNAPPY", "GZ", "LZ4", "LZO", "ZSTD", "BZIP2", "LZMA", "BROTLI"}
	encodings    = []string{"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"}
	blooms       = []string{"NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH"}
)

// parseFamilySpec reads one --family value:
//
//	NAME[:key=value,key=value...]
//
// with keys versions, ttl, compression, encoding, bloom, blocksize,
// in_memory, min_versions, keep_deleted_cells, mob, mob_threshold,
// blockcache and compaction.
func parseFamilySpec(s string) (store.FamilySpec, error) {
	name, opts, hasOpts := strings.Cut(s, ":")
	if err := checkFamilyName(name); err != nil {
		return store.FamilySpec{}, err
	}
	f := store.FamilySpec{Name: name}
	if !hasOpts {
		return f, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(opts, ",") {
		if kv == "" {
			return f, fmt.Errorf("family %s: empty setting in %q", name, s)
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return f, fmt.Errorf("family %s: setting %q is not key=value", name, kv)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		k = strings.ReplaceAll(k, "-", "_")
		if canon, ok := familyKeyAliases[k]; ok {
			k = canon
		}
		if seen[k] {
			return f, fmt.Errorf("family %s: %s given twice", name, k)
		}
		seen[k] = true
		if err := setFamilyOption(&f, k, v); err != nil {
			return f, fmt.Errorf("family %s: %w", name, err)
		}
	}
	return f, nil
}

// familyKeyAliases accepts HBase shell spellings of the keys as well.
var familyKeyAliases = map[string]string{
	"max_versions":        "versions",
	"data_block_encoding": "encoding",
	"bloomfilter":         "bloom",
	"bloom_filter":        "bloom",
	"block_size":          "blocksize",
	"inmemory":            "in_memory",
	"is_mob":              "mob",
}

func setFamilyOption(f *store.FamilySpec, k, v string) error {
	switch k {
	case "versions":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("versions=%q: want a whole number of at least 1", v)
		}
		f.MaxVersions = n
	case "ttl":
		d, err := parseTTL(v)
		if err != nil {
			return err
		}
		f.TTL = d
	case "compression":
		u, err := oneOf("compression", v, compressions)
		if err != nil {
			return err
		}
		f.Compression = u
	case "encoding":
		u, err := oneOf("encoding", v, encodings)
		if err != nil {
			return err
		}
		f.DataBlockEncoding = u
	case "bloom":
		u, err := oneOf("bloom", v, blooms)
		if err != nil {
			return err
		}
		f.BloomFilter = u
	case "blocksize":
		n, err := parseSize(v)
		if err != nil {
			return fmt.Errorf("blocksize=%q: %w", v, err)
		}
		f.BlockSize = n
	case "in_memory":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("in_memory=%q: want true or false", v)
		}
		f.InMemory = b
	case "min_versions":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("min_versions=%q: want a whole number of at least 0", v)
		}
		f.MinVersions = n
	case "keep_deleted_cells":
		u, err := oneOf("keep_deleted_cells", v, []string{"FALSE", "TRUE", "TTL"})
		if err != nil {
			return err
		}
		if u != "FALSE" {
			f.KeepDeletedCells = u
		}
	case "mob":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("mob=%q: want true or false", v)
		}
		f.MOB = b
	case "mob_threshold":
		n, err := parseSize(v)
		if err != nil || n < 1 {
			return fmt.Errorf("mob_threshold=%q: want a size in bytes (102400, 100K)", v)
		}
		f.MOBThreshold = int64(n)
	case "blockcache":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("blockcache=%q: want true or false", v)
		}
		f.NoBlockCache = !b
	case "compaction":
		switch strings.ToLower(v) {
		case "default":
			f.Compaction = ""
		case store.CompactionDateTiered, store.CompactionStripe:
			f.Compaction = strings.ToLower(v)
		default:
			return fmt.Errorf("compaction=%q: want default, %s or %s", v, store.CompactionDateTiered, store.CompactionStripe)
		}
	default:
		return fmt.Errorf("unknown setting %q; want versions, ttl, compression, encoding, bloom, blocksize, in_memory, min_versions, keep_deleted_cells, mob, mob_threshold, blockcache or compaction", k)
	}
	return nil
}

func oneOf(what, v string, allowed []string) (string, error) {
	u := strings.ToUpper(v)
	if !slices.Contains(allowed, u) {
		return "", fmt.Errorf("%s=%q: want one of %s", what, v, strings.Join(allowed, ", "))
	}
	return u, nil
}

// checkFamilyName applies HBase's rules for family names: not empty, no
// colon (it separates family from qualifier), no control characters, and not
// starting with a dot.
func checkFamilyName(name string) error {
	if name == "" {
		return fmt.Errorf("empty family name")
	}
	if strings.HasPrefix(name, ".") {
		return fmt.Errorf("family name %q starts with a dot", name)
	}
	for _, r := range name {
		if r < ' ' || r == 0x7f || r == ':' {
			return fmt.Errorf("family name %q contains %q", name, r)
		}
	}
	return nil
}

// parseTTL reads a time to live: FOREVER, a number of seconds as in the HBase
// shell, a Go duration (36h, 90m), or days and weeks (7d, 2w). HBase keeps
// whole seconds, so a fraction of a second is refused rather than rounded.
func parseTTL(v string) (time.Duration, error) {
	if strings.EqualFold(v, "FOREVER") {
		return 0, nil
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > int64(maxTTL/time.Second) {
			return 0, fmt.Errorf("ttl=%q: too long", v)
		}
		d = time.Duration(n) * time.Second
	} else if len(v) > 1 && (v[len(v)-1] == 'd' || v[len(v)-1] == 'w') {
		n, err := strconv.ParseInt(v[:len(v)-1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("ttl=%q: want FOREVER, seconds, a duration like 36h, or days like 7d", v)
		}
		unit := 24 * time.Hour
		if v[len(v)-1] == 'w' {
			unit *= 7
		}
		if n > int64(maxTTL/unit) {
			return 0, fmt.Errorf("ttl=%q: too long", v)
		}
		d = time.Duration(n) * unit
	} else {
		d, err = time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("ttl=%q: want FOREVER, seconds, a duration like 36h, or days like 7d", v)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("ttl=%q: must be positive (or FOREVER)", v)
	}
	if d%time.Second != 0 {
		return 0, fmt.Errorf("ttl=%q: HBase keeps whole seconds", v)
	}
	if d > maxTTL {
		return 0, fmt.Errorf("ttl=%q: too long", v)
	}
	return d, nil
}

// maxTTL is the largest TTL HBase can store: its TTL is an int of seconds.
const maxTTL = time.Duration(1<<31-1) * time.Second

// parseSize reads a byte count with an optional K, KB, KiB, M, MB or MiB
// suffix (all powers of 1024, as HBase's BLOCKSIZE means them).
func parseSize(v string) (int, error) {
	mult := 1
	num := v
	upper := strings.ToUpper(v)
	for _, suf := range []struct {
		s string
		m int
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"K", 1 << 10}, {"M", 1 << 20}} {
		if strings.HasSuffix(upper, suf.s) {
			mult, num = suf.m, v[:len(v)-len(suf.s)]
			break
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a positive byte count like 65536 or 64K")
	}
	if n > (1<<31-1)/mult {
		return 0, fmt.Errorf("too large")
	}
	return n * mult, nil
}
