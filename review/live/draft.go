package live

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/denorm/denorm/rowkey"
)

// WriteDraft writes a starting schema for the observed table: its families
// and settings, one field per sampled qualifier, a row key that names what
// the sample showed at its start, and workload.keys entries for what was
// inferred (a sequential time, the values of a low-cardinality lead). It is
// a draft: the comments say what could not be known.
func WriteDraft(w io.Writer, obs *Observation) error {
	l := AnalyzeKeys(obs.Keys)
	var b strings.Builder
	name := ident(obs.Table, "table")
	fmt.Fprintf(&b, "# A draft schema for %s, from %d sampled keys and %d cells (%s).\n", obs.Source, l.Sampled, obs.Cells, time.Now().UTC().Format(time.DateOnly))
	b.WriteString("# Field types, sizes and the entity key are guesses from bytes. Delimited text\n")
	b.WriteString("# keys are described as they are (text parts); other keys get denorm's own\n")
	b.WriteString("# encoding (docs/schema.md), so check the rowkey before pointing a writer at\n")
	b.WriteString("# this table. Queries, workload rates, client and ops settings are not in a\n")
	b.WriteString("# table: add them, then run denorm review on this file.\n")
	fmt.Fprintf(&b, "name: %s\n", name)
	b.WriteString("entities:\n  row:\n")

	var keyFields, rowkey []string
	dayColumn := "" // a time the key holds only as a day, stored in a column
	var keysYAML []string
	fields := map[string]string{} // name -> type
	used := map[string]bool{}
	addField := func(n, typ string) string {
		n = uniqueName(n, used)
		fields[n] = typ
		return n
	}
	// Delimited text keys can be described as they are, with text parts;
	// binary keys get denorm's own encoding, a starting point only.
	textual := l.Salt == 0 && l.Delim != 0 && delimOK(l.Delim)
	delim := string(l.Delim)
	switch {
	case textual && l.Time != "":
		name, typ := "ts", "timestamp"
		switch {
		case strings.HasPrefix(l.Time, "epoch seconds"):
			name, typ = "ts_s", "int64"
		case l.Day:
			name, typ = "date", "string"
		}
		ts := addField(name, typ)
		rest := addField("id", "string")
		rowkey = append(rowkey, fmt.Sprintf("text(%s, %s)", ts, delim), fmt.Sprintf("text(%s)", rest))
		keyFields = append(keyFields, ts, rest)
		keysYAML = append(keysYAML, fmt.Sprintf("    row.%s: {distribution: sequential}   # keys lead with %s", ts, l.Time))
	case textual && l.Segment == "ascii" && l.Distinct > 0 && l.Distinct <= fewValues && l.Sampled >= minSample:
		lead := addField("kind", "string")
		rest := addField("id", "string")
		rowkey = append(rowkey, fmt.Sprintf("text(%s, %s)", lead, delim), fmt.Sprintf("text(%s)", rest))
		keyFields = append(keyFields, lead, rest)
		keysYAML = append(keysYAML, fmt.Sprintf("    row.%s: {distribution: weighted, values: {%s}}   # %d distinct leading values sampled", lead, leadShares(obs, l), l.Distinct))
	case l.Time != "":
		ts := addField("ts", "timestamp")
		rest := addField("id", "bytes")
		part := ts
		if l.Day {
			// day() cannot be read back into a time, and a primary table
			// must store every field: the time goes to a column.
			part = "day(" + ts + ")"
			dayColumn = ts
		} else if l.Reversed {
			part = "reverse(" + ts + ")"
		}
		rowkey = append(rowkey, part, rest)
		keyFields = append(keyFields, rest)
		if dayColumn == "" {
			keyFields = append([]string{ts}, keyFields...)
		}
		keysYAML = append(keysYAML, fmt.Sprintf("    row.%s: {distribution: sequential}   # keys lead with %s", ts, l.Time))
	case l.Segment == "ascii" && l.Distinct > 0 && l.Distinct <= fewValues && l.Sampled >= minSample:
		lead := addField("kind", "string")
		rest := addField("id", "bytes")
		rowkey = append(rowkey, lead, rest)
		keyFields = append(keyFields, rest)
		keysYAML = append(keysYAML, fmt.Sprintf("    row.%s: {distribution: weighted, values: {%s}}   # %d distinct leading values sampled", lead, leadShares(obs, l), l.Distinct))
	default:
		id := addField("id", "bytes")
		rowkey = append(rowkey, id)
		keyFields = append(keyFields, id)
	}
	if l.Salt > 1 {
		rowkey = append([]string{fmt.Sprintf("salt(%s, %d)", keyFields[len(keyFields)-1], l.Salt)}, rowkey...)
	}
	if len(keyFields) == 1 {
		fmt.Fprintf(&b, "    key: %s\n", keyFields[0])
	} else {
		fmt.Fprintf(&b, "    key: [%s]\n", strings.Join(keyFields, ", "))
	}
	// One field per sampled qualifier.
	type col struct{ fam, qual, field string }
	var cols []col
	for _, fam := range sortedKeys(obs.Qualifiers) {
		quals := append([]string(nil), obs.Qualifiers[fam]...)
		sort.Strings(quals)
		for _, q := range quals {
			if !printableName(q) {
				continue
			}
			f := addField(ident(fam+"_"+q, "col"), "bytes")
			cols = append(cols, col{fam, q, f})
		}
	}
	b.WriteString("    fields:\n")
	for _, n := range sortedKeys(fields) {
		fmt.Fprintf(&b, "      %s: %s\n", n, fields[n])
	}
	b.WriteString("tables:\n")
	fmt.Fprintf(&b, "  %s:\n    role: primary\n    entity: row\n", name)
	quoted := make([]string, len(rowkey))
	for i, p := range rowkey {
		quoted[i] = strconv.Quote(p)
	}
	fmt.Fprintf(&b, "    rowkey: [%s]\n", strings.Join(quoted, ", "))
	if n := len(obs.Regions); n > 1 {
		fmt.Fprintf(&b, "    presplit: %d   # regions the table has now\n", n)
	}
	b.WriteString("    families:\n")
	for _, f := range obs.Spec.Families {
		var set []string
		if f.MaxVersions > 1 {
			set = append(set, fmt.Sprintf("versions: %d", f.MaxVersions))
		}
		if f.TTL > 0 {
			set = append(set, fmt.Sprintf("ttl: %ds", int64(f.TTL/time.Second)))
		}
		if c := strings.ToUpper(f.Compression); c != "" && c != "NONE" {
			set = append(set, "compression: "+c)
		}
		if e := strings.ToUpper(f.DataBlockEncoding); e != "" && e != "NONE" {
			set = append(set, "encoding: "+e)
		}
		if f.BlockSize > 0 {
			set = append(set, fmt.Sprintf("blocksize: %d", f.BlockSize))
		}
		if bf := strings.ToUpper(f.BloomFilter); bf != "" {
			set = append(set, "bloom: "+bf)
		}
		if f.InMemory {
			set = append(set, "in_memory: true")
		}
		fmt.Fprintf(&b, "      %s: {%s}\n", strconv.Quote(f.Name), strings.Join(set, ", "))
	}
	if dayColumn != "" && len(obs.Spec.Families) > 0 {
		cols = append(cols, col{obs.Spec.Families[0].Name, "ts", dayColumn})
	}
	if len(cols) > 0 {
		b.WriteString("    columns:\n")
		for _, c := range cols {
			fmt.Fprintf(&b, "      %s: %s\n", strconv.Quote(c.fam+":"+c.qual), c.field)
		}
	}
	if len(keysYAML) > 0 {
		b.WriteString("workload:\n  keys:\n")
		b.WriteString(strings.Join(keysYAML, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("live: write draft: %w", err)
	}
	return nil
}

// leadShares renders the sampled shares of each leading value.
func leadShares(obs *Observation, l Lead) string {
	counts := map[string]int{}
	for _, k := range obs.Keys {
		seg := k
		if l.Salt > 0 && len(seg) > 0 {
			seg = seg[1:]
		}
		if i := strings.IndexByte(string(seg), l.Delim); l.Delim != 0 && i >= 0 {
			seg = seg[:i]
		}
		counts[string(seg)]++
	}
	var parts []string
	for _, v := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%s: %.3g", strconv.Quote(v), float64(counts[v])/float64(len(obs.Keys))))
	}
	return strings.Join(parts, ", ")
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// ident makes a schema name of s: letters, digits, _ and -, not starting
// with a digit.
func ident(s, fallback string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || !identRE.MatchString(out) {
		out = fallback + "_" + out
	}
	if !identRE.MatchString(out) {
		return fallback
	}
	return out
}

func uniqueName(n string, used map[string]bool) string {
	base, i := n, 2
	for used[n] {
		n = fmt.Sprintf("%s_%d", base, i)
		i++
	}
	used[n] = true
	return n
}

// printableName reports a qualifier that can be written as text in the
// schema's column names.
func printableName(q string) bool {
	if q == "" || strings.ContainsAny(q, "{}:\"\\") {
		return false
	}
	for _, c := range []byte(q) {
		if c < 0x21 || c >= 0x7f {
			return false
		}
	}
	return true
}

// delimOK reports whether a key delimiter can be written in a text part
// (rowkey refuses letters, digits and the expression's own punctuation).
func delimOK(d byte) bool {
	_, err := rowkey.ParsePart(fmt.Sprintf("text(x, %c)", d))
	return err == nil
}
