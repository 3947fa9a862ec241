package main

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

func TestParseFamilySpec(t *testing.T) {
	good := []struct {
		in   string
		want store.FamilySpec
	}{
		{"d", store.FamilySpec{Name: "d"}},
		{"d:versions=3,ttl=7d,compression=snappy,encoding=FAST_DIFF,bloom=ROW",
			store.FamilySpec{Name: "d", MaxVersions: 3, TTL: 7 * 24 * time.Hour, Compression: "SNAPPY", DataBlockEncoding: "FAST_DIFF", BloomFilter: "ROW"}},
		{"e:ttl=86400,blocksize=64K,in_memory=true", store.FamilySpec{Name: "e", TTL: 24 * time.Hour, BlockSize: 65536, InMemory: true}},
		{"e:TTL=36h,BLOCK_SIZE=1MiB", store.FamilySpec{Name: "e", TTL: 36 * time.Hour, BlockSize: 1 << 20}},
		{"e:max_versions=2,data_block_encoding=diff,bloomfilter=rowcol", store.FamilySpec{Name: "e", MaxVersions: 2, DataBlockEncoding: "DIFF", BloomFilter: "ROWCOL"}},
		{"w:ttl=2w", store.FamilySpec{Name: "w", TTL: 14 * 24 * time.Hour}},
		{"f:ttl=FOREVER", store.FamilySpec{Name: "f"}},
		{"t:versions=3,min_versions=1,compaction=date_tiered,keep_deleted_cells=ttl",
			store.FamilySpec{Name: "t", MaxVersions: 3, MinVersions: 1, Compaction: store.CompactionDateTiered, KeepDeletedCells: "TTL"}},
		{"b:is_mob=true,mob_threshold=200K,blockcache=false", store.FamilySpec{Name: "b", MOB: true, MOBThreshold: 200 << 10, NoBlockCache: true}},
	}
	for _, tc := range good {
		got, err := parseFamilySpec(tc.in)
		if err != nil {
			t.Errorf("parseFamilySpec(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseFamilySpec(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	bad := []string{"", ":versions=1", ".d", "a:b:c", "d:", "d:versions", "d:versions=0", "d:versions=x",
		"d:ttl=0", "d:ttl=-5", "d:ttl=1.5s", "d:ttl=soon", "d:compression=zip", "d:encoding=x", "d:bloom=x",
		"d:blocksize=0", "d:blocksize=9999999999", "d:in_memory=maybe", "d:colour=red", "d:versions=1,versions=2",
		"d:versions=1,", "d\x01", "d:ttl=99999999999999d",
		"d:min_versions=-1", "d:keep_deleted_cells=maybe", "d:mob=perhaps", "d:mob_threshold=0", "d:compaction=tiered"}
	for _, in := range bad {
		if f, err := parseFamilySpec(in); err == nil {
			t.Errorf("parseFamilySpec(%q) = %+v, want an error", in, f)
		}
	}
}

// familySpecString writes a spec in the --family syntax, the inverse of
// parseFamilySpec for the specs it accepts.
func familySpecString(f store.FamilySpec) string {
	var opts []string
	if f.MaxVersions > 0 {
		opts = append(opts, fmt.Sprintf("versions=%d", f.MaxVersions))
	}
	if f.TTL > 0 {
		opts = append(opts, fmt.Sprintf("ttl=%d", int64(f.TTL/time.Second)))
	}
	for _, kv := range [][2]string{{"compression", f.Compression}, {"encoding", f.DataBlockEncoding}, {"bloom", f.BloomFilter}} {
		if kv[1] != "" {
			opts = append(opts, kv[0]+"="+kv[1])
		}
	}
	if f.BlockSize > 0 {
		opts = append(opts, fmt.Sprintf("blocksize=%d", f.BlockSize))
	}
	if f.InMemory {
		opts = append(opts, "in_memory=true")
	}
	if f.MinVersions > 0 {
		opts = append(opts, fmt.Sprintf("min_versions=%d", f.MinVersions))
	}
	if f.KeepDeletedCells != "" {
		opts = append(opts, "keep_deleted_cells="+f.KeepDeletedCells)
	}
	if f.MOB {
		opts = append(opts, "mob=true")
	}
	if f.MOBThreshold > 0 {
		opts = append(opts, fmt.Sprintf("mob_threshold=%d", f.MOBThreshold))
	}
	if f.NoBlockCache {
		opts = append(opts, "blockcache=false")
	}
	if f.Compaction != "" {
		opts = append(opts, "compaction="+f.Compaction)
	}
	if len(opts) == 0 {
		return f.Name
	}
	return f.Name + ":" + strings.Join(opts, ",")
}

func FuzzParseFamilySpec(f *testing.F) {
	for _, s := range []string{"d", "d:versions=3,ttl=7d,compression=SNAPPY,encoding=FAST_DIFF,bloom=ROW",
		"e:ttl=86400,blocksize=64K,in_memory=true", "d:ttl=1.5s", "x:versions=1,versions=2", "::", "d:ttl=2w",
		"t:min_versions=1,keep_deleted_cells=TRUE,mob=true,mob_threshold=100K,blockcache=false,compaction=stripe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := parseFamilySpec(s)
		if err != nil {
			return
		}
		if spec.Name == "" || strings.Contains(spec.Name, ":") {
			t.Fatalf("parseFamilySpec(%q) accepted family name %q", s, spec.Name)
		}
		if spec.TTL < 0 || spec.TTL%time.Second != 0 || spec.MaxVersions < 0 || spec.BlockSize < 0 {
			t.Fatalf("parseFamilySpec(%q) = %+v: out of range", s, spec)
		}
		again, err := parseFamilySpec(familySpecString(spec))
		if err != nil {
			t.Fatalf("parseFamilySpec(%q) = %+v, but its canonical form %q fails: %v", s, spec, familySpecString(spec), err)
		}
		if !reflect.DeepEqual(again, spec) {
			t.Fatalf("round trip of %q: %+v then %+v", s, spec, again)
		}
	})
}

func TestParseColumn(t *testing.T) {
	c, err := parseColumn("d")
	if err != nil || c.Family != "d" || c.Qualifier != nil {
		t.Errorf(`parseColumn("d") = %+v, %v; want the whole family`, c, err)
	}
	c, err = parseColumn("d:")
	if err != nil || c.Family != "d" || c.Qualifier == nil || len(c.Qualifier) != 0 {
		t.Errorf(`parseColumn("d:") = %+v, %v; want the empty qualifier`, c, err)
	}
	c, err = parseColumn(`i:\x00\x01:x`)
	if err != nil || c.Family != "i" || !bytes.Equal(c.Qualifier, []byte("\x00\x01:x")) {
		t.Errorf(`parseColumn("i:\x00\x01:x") = %+v, %v`, c, err)
	}
	for _, in := range []string{"", ":q", `d:\x0`, `d:\xZZ`, ".d:q"} {
		if c, err := parseColumn(in); err == nil {
			t.Errorf("parseColumn(%q) = %+v, want an error", in, c)
		}
	}
}

func FuzzParseColumn(f *testing.F) {
	for _, s := range []string{"d", "d:", `d:s`, `i:\x00\xFF`, `:`, `d:\x`, `d:\\x41`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseColumn(s)
		if err != nil {
			return
		}
		if c.Family == "" || strings.ContainsRune(c.Family, ':') {
			t.Fatalf("parseColumn(%q) accepted family %q", s, c.Family)
		}
		if c.Qualifier == nil {
			return
		}
		// Printing a qualifier and reading it back must give the same bytes.
		back, err := parseColumn(c.Family + ":" + store.Printable(c.Qualifier))
		if err != nil || !bytes.Equal(back.Qualifier, c.Qualifier) {
			t.Fatalf("parseColumn(%q): qualifier %q does not survive printing: %q, %v", s, c.Qualifier, back.Qualifier, err)
		}
	})
}

func TestReadSplitsFile(t *testing.T) {
	in := "# regions of orders\n\nc4\r\n\\x23hash\n\\x00\\xFF\n# done\n"
	keys, err := readSplitsFile(strings.NewReader(in), "splits.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("c4"), []byte("#hash"), {0x00, 0xFF}}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("readSplitsFile = %q, want %q", keys, want)
	}
	_, err = readSplitsFile(strings.NewReader("a\nb\\x4\n"), "s.txt")
	if err == nil || !strings.Contains(err.Error(), "s.txt:2") {
		t.Fatalf("bad escape on line 2: err = %v, want it to name s.txt:2", err)
	}
}

func FuzzReadSplitsFile(f *testing.F) {
	f.Add("a\nb\n")
	f.Add("# c\n\\x00\\x01\n\n\\x")
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := readSplitsFile(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		if len(keys) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d keys from %d lines", len(keys), strings.Count(s, "\n")+1)
		}
		norm, err := normalizeSplits(keys)
		if err != nil {
			return
		}
		if !slices.IsSortedFunc(norm, bytes.Compare) || len(norm) != len(keys) {
			t.Fatalf("normalizeSplits(%q) = %q: not sorted or lost keys", keys, norm)
		}
	})
}

func TestNormalizeSplits(t *testing.T) {
	got, err := normalizeSplits([][]byte{[]byte("m"), []byte("c"), {0xFF}, []byte("c\x00")})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("c"), []byte("c\x00"), []byte("m"), {0xFF}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("normalizeSplits = %q, want %q", got, want)
	}
	if _, err := normalizeSplits([][]byte{[]byte("a"), []byte("a")}); err == nil {
		t.Error("a repeated split key was accepted")
	}
	if _, err := normalizeSplits([][]byte{{}}); err == nil {
		t.Error("an empty split key was accepted")
	}
}

func TestHumanTTL(t *testing.T) {
	for in, want := range map[int64]string{86400: "1 DAYS", 90061: "1 DAYS 1 HOURS 1 MINUTES 1 SECONDS", 59: "59 SECONDS"} {
		if got := humanTTL(in); got != want {
			t.Errorf("humanTTL(%d) = %q, want %q", in, got, want)
		}
	}
}
