package live

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/denorm/denorm/review"
	"github.com/denorm/denorm/store"
)

// Thresholds of what the sample must show before a rule fires.
const (
	// A leading field with this many distinct values or fewer, in a sample
	// of at least minSample keys, is a low-cardinality prefix.
	fewValues = 16
	minSample = 50
	// Cell timestamps below this are not epoch milliseconds (it is
	// 1973-03-03): versions or counters stamped as timestamps.
	minClockTS = 100_000_000_000
)

// Review reports findings from an observation, under the catalogue's ids
// and with the catalogue's fixes. Findings carry no line (there is no
// file); the table is the observation's.
func Review(obs *Observation) review.Report {
	r := &reporter{obs: obs, lead: AnalyzeKeys(obs.Keys)}
	r.keyMonotonic()
	r.hotPrefix()
	r.families()
	r.cells()
	r.regionShare()
	return review.Report{File: obs.Source, Findings: r.findings}
}

type reporter struct {
	obs      *Observation
	lead     Lead
	findings []review.Finding
}

func (r *reporter) add(id string, sev review.Severity, msg string) {
	rule, _ := review.Lookup(id)
	if sev == "" {
		sev = rule.Severity
	}
	r.findings = append(r.findings, review.Finding{Rule: id, Severity: sev, Table: r.obs.Table, Message: msg, Fix: rule.Fix})
}

func (r *reporter) sampleText() string {
	return fmt.Sprintf("%d sampled keys of %d region(s)", r.lead.Sampled, len(r.obs.Regions))
}

// keyMonotonic: a time leading the key (after no salt) sends new rows to
// one end of the table.
func (r *reporter) keyMonotonic() {
	l := r.lead
	if l.Time == "" || l.Salt > 1 {
		return
	}
	dir := "the end"
	if l.Reversed {
		dir = "the start"
	}
	span := fmt.Sprintf("from %s to %s", l.Oldest.Format(time.RFC3339), l.Newest.Format(time.RFC3339))
	if l.Day {
		// A day prefix: the same reading of the catalogue as for a schema.
		r.add("key-monotonic", review.SeverityWarning, fmt.Sprintf(
			"the row keys of %s start with %s (%s, %s): every write of a day goes to the same key range at %s of the table",
			r.obs.Table, l.Time, r.sampleText(), span, dir))
		return
	}
	r.add("key-monotonic", "", fmt.Sprintf(
		"the row keys of %s start with %s (%s, %s): every new row sorts to %s of the table, so one region takes all writes%s",
		r.obs.Table, l.Time, r.sampleText(), span, dir, r.newestRegionNote()))
}

// newestRegionNote names the region holding the newest sampled key,
// where writes go now.
func (r *reporter) newestRegionNote() string {
	o := r.obs
	if len(o.Regions) < 2 || len(o.Keys) == 0 {
		return ""
	}
	newest := o.Keys[len(o.Keys)-1]
	if r.lead.Reversed {
		newest = o.Keys[0]
	}
	for i, reg := range o.Regions {
		if reg.Contains(newest) {
			return fmt.Sprintf("; the newest sampled key is in region %d of %d (%s)", i+1, len(o.Regions), reg.ID)
		}
	}
	return ""
}

// hotPrefix: few distinct leading values, or a salt over few buckets.
func (r *reporter) hotPrefix() {
	l := r.lead
	if l.Sampled < minSample || l.Hashed || l.Time != "" {
		return
	}
	if l.Salt > 0 && l.Salt <= 2 && l.Sampled >= minSample {
		r.add("index-hot-prefix", "", fmt.Sprintf(
			"the row keys of %s start with a bucket byte that takes only %d value(s) in %s: writes have %d target(s)",
			r.obs.Table, l.Salt, r.sampleText(), l.Salt))
		return
	}
	if l.Distinct == 0 || l.Distinct > fewValues || l.Sampled < 4*l.Distinct {
		return
	}
	what := "first field"
	if l.Salt > 0 {
		what = fmt.Sprintf("first field after a %d-bucket salt byte", l.Salt)
	}
	r.add("index-hot-prefix", "", fmt.Sprintf(
		"the %s of %s's row keys takes only %d distinct value(s) in %s (%s): all writes for one value land in one key range",
		what, r.obs.Table, l.Distinct, r.sampleText(), strings.Join(l.Top, ", ")))
}

// familySettings is what justifies a separate family, as in review.
func familySettings(f store.FamilySpec) string {
	return fmt.Sprintf("v=%d ttl=%s c=%s e=%s b=%d bf=%s m=%t",
		f.Versions(), f.TTL, strings.ToUpper(f.Compression), strings.ToUpper(f.DataBlockEncoding),
		f.BlockSize, strings.ToUpper(f.BloomFilter), f.InMemory)
}

func (r *reporter) families() {
	fams := r.obs.Spec.Families
	if len(fams) > 2 {
		groups := map[string][]string{}
		var order []string
		for _, f := range fams {
			k := familySettings(f)
			if groups[k] == nil {
				order = append(order, k)
			}
			groups[k] = append(groups[k], f.Name)
		}
		if len(groups) < len(fams) {
			var same []string
			for _, k := range order {
				if g := groups[k]; len(g) > 1 {
					same = append(same, strings.Join(g, ", "))
				}
			}
			r.add("family-count", "", fmt.Sprintf(
				"table %s has %d column families, and these share the same settings: %s; every family costs a store, a memstore and files in each region",
				r.obs.Table, len(fams), strings.Join(same, "; ")))
		}
	}
	var long []string
	for _, f := range fams {
		if f.Versions() > 1 {
			r.add("versions-as-history", "", fmt.Sprintf(
				"family %s of table %s keeps %d versions: older ones vanish at compaction once %d newer exist",
				f.Name, r.obs.Table, f.Versions(), f.Versions()))
		}
		if len(f.Name) > 2 {
			long = append(long, "family "+f.Name)
		}
		if f.TTL > 0 && r.obs.Cells > 0 && r.obs.MaxTS < minClockTS {
			r.add("ttl-with-version-timestamps", "", fmt.Sprintf(
				"family %s of table %s has a TTL of %s, but the sampled cells are stamped %d to %d, not epoch milliseconds: HBase sees them as written in 1970 and expires them",
				f.Name, r.obs.Table, f.TTL, r.obs.MinTS, r.obs.MaxTS))
		}
	}
	for _, fam := range sortedKeys(r.obs.Qualifiers) {
		for _, q := range r.obs.Qualifiers[fam] {
			if len(q) > 4 {
				long = append(long, "qualifier "+fam+":"+q)
			}
		}
	}
	if len(long) > 0 {
		more := ""
		if len(long) > 4 {
			more = fmt.Sprintf(" and %d more", len(long)-4)
			long = long[:4]
		}
		r.add("names-long", "", fmt.Sprintf("table %s: %s%s; every cell repeats its family and qualifier names",
			r.obs.Table, strings.Join(long, ", "), more))
	}
}

func (r *reporter) cells() {
	o := r.obs
	switch {
	case o.MaxValue > store.DefaultMaxCellSize:
		r.add("cell-huge", review.SeverityError, fmt.Sprintf("a sampled cell of %s (column %s) is %d bytes, over the 10 MiB cell limit", o.Table, o.MaxValueColumn, o.MaxValue))
	case o.MaxValue >= 1<<20:
		r.add("cell-huge", "", fmt.Sprintf("a sampled cell of %s (column %s) is %d bytes: every flush and compaction rewrites it", o.Table, o.MaxValueColumn, o.MaxValue))
	}
	switch {
	case o.MaxCells >= 100_000:
		r.add("row-unbounded", review.SeverityError, fmt.Sprintf("a sampled row of %s (%q) has at least %d cells", o.Table, o.MaxCellsRow, o.MaxCells))
	case o.MaxCells > 10_000:
		r.add("row-unbounded", review.SeverityWarning, fmt.Sprintf("a sampled row of %s (%q) has %d cells", o.Table, o.MaxCellsRow, o.MaxCells))
	}
}

// regionShare: with several regions, a sample that fills a few and leaves
// the rest empty shows the key space is not used as it was split.
func (r *reporter) regionShare() {
	o := r.obs
	if len(o.Regions) < 4 || len(r.lead.Top) == 0 && r.lead.Sampled == 0 {
		return
	}
	empty, sampled := 0, 0
	for _, n := range o.PerRegion {
		if n >= 0 {
			sampled++
		}
		if n == 0 {
			empty++
		}
	}
	if r.lead.Sampled >= minSample && sampled >= 4 && empty*2 > sampled {
		r.add("region-size", review.SeverityInfo, fmt.Sprintf(
			"%d of the %d sampled regions of %s are empty (keys per region: %s): the split points do not match the keys written",
			empty, sampled, o.Table, perRegionText(o.PerRegion, o.RegionCap)))
	}
}

func perRegionText(counts []int, limit int) string {
	parts := make([]string, 0, len(counts))
	for i, n := range counts {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("... %d more", len(counts)-12))
			break
		}
		s := fmt.Sprint(n)
		switch {
		case n < 0:
			s = "?"
		case n >= limit:
			s += "+"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
