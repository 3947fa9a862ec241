package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/denorm/denorm/store"
)

// Options bound how much of a table Inspect reads.
type Options struct {
	// Sample is the most row keys kept (default 1000). Half of it, at most,
	// goes to the first keys of each region; the rest to a scan from the
	// table's start.
	Sample int
	// MaxCellsPerRow stops counting a row's cells beyond this (default
	// 100,000): a row that wide is reported whatever its true width.
	MaxCellsPerRow int
}

// DefaultSample is Options.Sample when none is given.
const DefaultSample = 1000

func (o Options) sample() int {
	if o.Sample > 0 {
		return o.Sample
	}
	return DefaultSample
}

func (o Options) maxCells() int {
	if o.MaxCellsPerRow > 0 {
		return o.MaxCellsPerRow
	}
	return 100_000
}

// Observation is what Inspect saw of one table.
type Observation struct {
	Source  string // what the user named, e.g. hbase://127.0.0.1:9090/events
	Table   string
	Spec    store.TableSpec
	Regions []store.Region
	// Keys are the distinct sampled row keys in ascending order.
	Keys [][]byte
	// PerRegion counts the sampled keys in each region (parallel to
	// Regions; -1 for a region not sampled, in tables of very many
	// regions); RegionCap is the most any region's own sample could take,
	// so a count at the cap means "at least".
	PerRegion []int
	RegionCap int
	// Qualifiers maps family to the qualifiers seen in sampled rows (at
	// most maxQualifiers per family).
	Qualifiers map[string][]string
	// MaxCells is the widest sampled row's cell count; MaxCellsRow its key.
	MaxCells    int
	MaxCellsRow []byte
	// MaxValue is the largest sampled cell value in bytes.
	MaxValue       int
	MaxValueColumn string
	// Timestamps are the smallest and largest sampled cell timestamps.
	MinTS, MaxTS int64
	Cells        int
}

const maxQualifiers = 64

// SplitURL separates a table URL (hbase://host:9090/TABLE,
// pebble:///dir/TABLE, pebble://./dir/TABLE) into the store URL and the
// table name: the last path element names the table.
func SplitURL(raw string) (storeURL, table string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("table URL %q: %w", raw, err)
	}
	if u.Scheme == "" {
		return "", "", fmt.Errorf("table URL %q: want scheme://.../TABLE (hbase://host:9090/TABLE or pebble:///dir/TABLE)", raw)
	}
	p := strings.TrimSuffix(u.Path, "/")
	dir, name := path.Split(p)
	if name == "" {
		return "", "", fmt.Errorf("table URL %q names no table: end it with /TABLE", raw)
	}
	u.Path = strings.TrimSuffix(dir, "/")
	return u.String(), name, nil
}

// Inspect describes the table and samples its keys and cells. It reads at
// most opts.Sample rows, each cut into pieces of a bounded cell count.
func Inspect(ctx context.Context, st store.Store, table string, opts Options) (*Observation, error) {
	spec, err := st.DescribeTable(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("live: describe %s: %w", table, err)
	}
	regions, err := st.Regions(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("live: regions of %s: %w", table, err)
	}
	obs := &Observation{Table: table, Spec: spec, Regions: regions, Qualifiers: map[string][]string{}, PerRegion: make([]int, len(regions))}
	s := &sampler{obs: obs, st: st, table: table, maxCells: opts.maxCells(), seen: map[string]bool{}, quals: map[string]map[string]bool{}}
	budget := opts.sample()
	if len(regions) > 1 {
		// The first keys of every region show what each region starts
		// with; a region empty in its first keys is empty. A table of very
		// many regions has every step-th one read, so the scans stay
		// bounded too; the others count -1 (not sampled).
		step := max(1, (len(regions)+maxRegionScans-1)/maxRegionScans)
		scanned := (len(regions) + step - 1) / step
		obs.RegionCap = max(1, budget/2/scanned)
		for i, r := range regions {
			if i%step != 0 {
				obs.PerRegion[i] = -1
				continue
			}
			n, err := s.scan(ctx, r.Start, r.End, obs.RegionCap)
			if err != nil {
				return nil, err
			}
			obs.PerRegion[i] = n
		}
	}
	if rest := budget - len(s.seen); rest > 0 {
		// The scan from the start meets the regions' first keys again:
		// read past them, up to the budget of distinct keys.
		s.cap = budget
		if _, err := s.scan(ctx, nil, nil, budget+len(s.seen)); err != nil {
			return nil, err
		}
	}
	if len(regions) == 1 {
		obs.PerRegion[0] = len(s.seen)
		obs.RegionCap = budget
	}
	s.finish()
	return obs, nil
}

// sampler reads rows in pieces and keeps what the inference needs.
type sampler struct {
	obs      *Observation
	st       store.Store
	table    string
	maxCells int
	seen     map[string]bool
	quals    map[string]map[string]bool
	cap      int // stop a scan once this many distinct keys are kept; 0: no cap
}

// maxRegionScans bounds the per-region scans of one inspection.
const maxRegionScans = 256

// pieceCells is the cells per scanner piece: a wide row arrives in pieces
// of this many cells, so no row is held whole.
const pieceCells = 1000

// scan reads up to limit rows of [start, end) and returns how many it read.
func (s *sampler) scan(ctx context.Context, start, end []byte, limit int) (int, error) {
	sc, err := s.st.Scan(ctx, s.table, store.Scan{Start: start, Stop: end, Limit: limit, Batch: pieceCells, Caching: min(limit, 500)})
	if err != nil {
		return 0, fmt.Errorf("live: scan %s: %w", s.table, err)
	}
	defer sc.Close()
	rows := 0
	var cur []byte
	cells := 0
	for sc.Next(ctx) {
		row := sc.Row()
		if cur == nil || !bytes.Equal(cur, row.Key) {
			if s.cap > 0 && len(s.seen) >= s.cap {
				break
			}
			s.endRow(cur, cells)
			cur, cells = append([]byte(nil), row.Key...), 0
			rows++
			if !s.seen[string(cur)] {
				s.seen[string(cur)] = true
				s.obs.Keys = append(s.obs.Keys, cur)
			}
		}
		if cells >= s.maxCells {
			continue // already counted as wide as we count
		}
		cells += len(row.Cells)
		for _, c := range row.Cells {
			s.cell(c)
		}
	}
	s.endRow(cur, cells)
	if err := sc.Err(); err != nil {
		return rows, fmt.Errorf("live: scan %s: %w", s.table, err)
	}
	return rows, nil
}

func (s *sampler) endRow(key []byte, cells int) {
	if key != nil && cells > s.obs.MaxCells {
		s.obs.MaxCells, s.obs.MaxCellsRow = min(cells, s.maxCells), key
	}
}

func (s *sampler) cell(c store.Cell) {
	o := s.obs
	if o.Cells == 0 || c.Timestamp < o.MinTS {
		o.MinTS = c.Timestamp
	}
	if o.Cells == 0 || c.Timestamp > o.MaxTS {
		o.MaxTS = c.Timestamp
	}
	o.Cells++
	if len(c.Value) > o.MaxValue {
		o.MaxValue, o.MaxValueColumn = len(c.Value), c.Family+":"+string(c.Qualifier)
	}
	q := s.quals[c.Family]
	if q == nil {
		q = map[string]bool{}
		s.quals[c.Family] = q
	}
	if len(q) < maxQualifiers && !q[string(c.Qualifier)] {
		q[string(c.Qualifier)] = true
		o.Qualifiers[c.Family] = append(o.Qualifiers[c.Family], string(c.Qualifier))
	}
}

// finish sorts the sample: keys from several scans arrive out of order.
func (s *sampler) finish() {
	slices.SortFunc(s.obs.Keys, bytes.Compare)
}

// WriteDescription writes what Inspect saw, for people: families and their
// settings, regions with the sampled keys in each, and what the keys'
// start reads as.
func WriteDescription(w io.Writer, obs *Observation) error {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s: %s, %s, %d sampled keys, %d cells\n",
		obs.Table, count(len(obs.Spec.Families), "family", "families"), count(len(obs.Regions), "region", "regions"), len(obs.Keys), obs.Cells)
	for _, f := range obs.Spec.Families {
		fmt.Fprintf(&b, "  family %s: %s\n", f.Name, familyText(f))
	}
	if t := obs.Spec; t.SplitPolicy != "" || t.RegionReplicas > 1 || t.MaxRowSize > 0 {
		fmt.Fprintf(&b, "  split policy %q, region replicas %d, max row size %d\n", t.SplitPolicy, max(t.RegionReplicas, 1), t.MaxRowSize)
	}
	for i, r := range obs.Regions {
		if i == 16 {
			fmt.Fprintf(&b, "  ... %d more regions\n", len(obs.Regions)-16)
			break
		}
		n := "unsampled"
		if i < len(obs.PerRegion) && obs.PerRegion[i] >= 0 {
			n = fmt.Sprint(obs.PerRegion[i])
			if obs.PerRegion[i] >= obs.RegionCap {
				n += "+"
			}
		}
		fmt.Fprintf(&b, "  region %d [%s, %s): %s sampled keys\n", i+1, store.Printable(r.Start), store.Printable(r.End), n)
	}
	l := AnalyzeKeys(obs.Keys)
	switch {
	case l.Hashed:
		b.WriteString("  keys start with a hashed prefix\n")
	case l.Time != "":
		fmt.Fprintf(&b, "  keys start with %s, %s to %s\n", l.Time, l.Oldest.Format(time.RFC3339), l.Newest.Format(time.RFC3339))
	case l.Distinct > 0:
		fmt.Fprintf(&b, "  first key field (%s): %d distinct values sampled, most common %s\n", l.Segment, l.Distinct, strings.Join(l.Top, ", "))
	}
	if l.Salt > 0 {
		fmt.Fprintf(&b, "  after a bucket byte with %d values\n", l.Salt)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("live: write description: %w", err)
	}
	return nil
}

func familyText(f store.FamilySpec) string {
	parts := []string{fmt.Sprintf("versions %d", f.Versions())}
	if f.TTL > 0 {
		parts = append(parts, "ttl "+f.TTL.String())
	}
	for _, kv := range [][2]string{{"compression", f.Compression}, {"encoding", f.DataBlockEncoding}, {"bloom", f.BloomFilter},
		{"keep deleted cells", f.KeepDeletedCells}, {"compaction", f.Compaction}} {
		if kv[1] != "" && !strings.EqualFold(kv[1], "NONE") {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	if f.MinVersions > 0 {
		parts = append(parts, fmt.Sprintf("min versions %d", f.MinVersions))
	}
	if f.MOB {
		parts = append(parts, "mob")
	}
	if f.NoBlockCache {
		parts = append(parts, "no block cache")
	}
	if f.InMemory {
		parts = append(parts, "in memory")
	}
	return strings.Join(parts, ", ")
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
