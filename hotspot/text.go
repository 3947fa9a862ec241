package hotspot

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteJSON writes the result as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fmt.Errorf("hotspot: write json: %w", err)
	}
	return nil
}

// WriteText writes a summary for people: the setup, the figures, and the
// busiest regions.
func WriteText(w io.Writer, res *Result) error {
	var b strings.Builder
	sm := res.Summary
	fmt.Fprintf(&b, "%s.%s  rowkey [%s]\n", res.Schema, res.Table, strings.Join(res.Key, ", "))
	if res.Source == SourceStore {
		fmt.Fprintf(&b, "observed request counts of %d regions (cumulative since each opened)\n", sm.EndRegions)
	} else {
		fmt.Fprintf(&b, "simulated %v in %d steps of %v, %d sampled writes per step, seed %d\n",
			res.Duration, len(res.Steps), res.Step, res.SamplesPerStep, res.Seed)
		fmt.Fprintf(&b, "load: %s writes/s, %s reads/s; %s bytes per row\n",
			num(res.WritesPerSecond), num(res.ReadsPerSecond), num(res.BytesPerRow))
		fmt.Fprintf(&b, "regions: %s; %d at start, %d at end, %d splits", res.Layout, sm.StartRegions, sm.EndRegions, sm.Splits)
		if res.SplitSize > 0 {
			fmt.Fprintf(&b, " (split past %s", bytesText(float64(res.SplitSize)))
			if res.SplitScale > 1.0001 {
				fmt.Fprintf(&b, ", region size scaled down %.0fx", res.SplitScale)
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if res.Source == SourceStore {
		for _, k := range []struct {
			name string
			f    Figures
		}{{"all requests", sm.Requests.Typical}, {"writes", sm.Writes.Typical}} {
			fmt.Fprintf(&b, "  %s: busiest region's share %s, max over mean %.2f, %d of %d regions take half\n",
				k.name, pct(k.f.BusiestShare), k.f.MaxOverMean, k.f.HalfLoadRegions, sm.EndRegions)
		}
	} else {
		fmt.Fprintf(&b, "  %-36s %-14s %s\n", "", "typical step", "worst step")
		for _, k := range []struct {
			name string
			sp   Spread
		}{{"writes", sm.Writes}, {"all requests", sm.Requests}} {
			fmt.Fprintf(&b, "  %-36s %-14s %s\n", k.name+": busiest region's share", pct(k.sp.Typical.BusiestShare), pct(k.sp.Worst.BusiestShare))
			fmt.Fprintf(&b, "  %-36s %-14.2f %.2f\n", k.name+": max over mean", k.sp.Typical.MaxOverMean, k.sp.Worst.MaxOverMean)
			fmt.Fprintf(&b, "  %-36s %-14d %d\n", k.name+": regions taking half", k.sp.Typical.HalfLoadRegions, k.sp.Worst.HalfLoadRegions)
		}
		fmt.Fprintf(&b, "\nAn even spread of writes would show a max over mean near %.2f from sampling alone.\n", sm.NoiseMaxOverMean)
		fmt.Fprintf(&b, "The busiest region changed %d times over the run (%d distinct regions).\n", busiestChanges(res), sm.DistinctBusiest)
	}
	b.WriteString(verdict(res))
	b.WriteString("\nbusiest regions")
	if res.Source == SourceSimulation {
		b.WriteString(" (mean over their life)")
	}
	b.WriteString(":\n")
	fmt.Fprintf(&b, "  %-5s %-24s %-24s %12s %12s %10s\n", "id", "start key", "end key", "writes", "reads", "size")
	for _, r := range topRegions(res, 8) {
		wr, rd := meanOf(r.Writes), meanOf(r.Reads)
		size := 0.0
		if len(r.Bytes) > 0 {
			size = r.Bytes[len(r.Bytes)-1]
		}
		sizeText := bytesText(size)
		if res.Source == SourceStore {
			sizeText = "-"
		}
		fmt.Fprintf(&b, "  %-5d %-24s %-24s %12s %12s %10s\n", r.ID, clip(visible(r.StartKey), 24, "(start)"), clip(visible(r.EndKey), 24, "(end)"), num(wr), num(rd), sizeText)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("hotspot: write text: %w", err)
	}
	return nil
}

// verdict is one line a person can act on.
func verdict(res *Result) string {
	sm := res.Summary
	f := sm.Writes.Typical
	var total float64
	for _, st := range res.Steps {
		total += st.Writes + st.Reads
	}
	switch {
	case total == 0 && res.Source == SourceStore:
		return "\nNo requests recorded: nothing to compare. (The embedded store counts since it opened;\n" +
			"HBase through its Thrift2 gateway reports no counts: read them from the region servers' /jmx.)\n"
	case total == 0:
		return "\nNo requests recorded: nothing to compare.\n"
	case sm.EndRegions <= 1 && sm.StartRegions <= 1:
		return "\nOne region takes everything: nothing to compare.\n"
	case f.BusiestShare > 0.5:
		if res.Source == SourceStore {
			return fmt.Sprintf("\nHOT SPOT: one region has taken %s of the writes.\n", pct(f.BusiestShare))
		}
		return fmt.Sprintf("\nHOT SPOT: at a typical moment one region takes %s of the writes.\n", pct(f.BusiestShare))
	case res.Source == SourceSimulation && f.MaxOverMean <= sm.NoiseMaxOverMean*1.1:
		return "\nEven: the writes' spread is within sampling noise of perfect.\n"
	case f.MaxOverMean > 2:
		return fmt.Sprintf("\nSkewed: the busiest region takes %.1fx the mean region's writes.\n", f.MaxOverMean)
	}
	return "\nFairly even.\n"
}

func busiestChanges(res *Result) int {
	n, last := 0, -1
	for _, s := range res.Steps {
		if s.Busiest >= 0 && last >= 0 && s.Busiest != last {
			n++
		}
		if s.Busiest >= 0 {
			last = s.Busiest
		}
	}
	return n
}

func topRegions(res *Result, k int) []*Region {
	rs := append([]*Region(nil), res.Regions...)
	load := func(r *Region) float64 { return meanOf(r.Writes) + meanOf(r.Reads) }
	sort.SliceStable(rs, func(i, j int) bool { return load(rs[i]) > load(rs[j]) })
	return rs[:min(k, len(rs))]
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// visible spells spaces in a printable key as \x20, which would otherwise
// read as nothing in a column or label.
func visible(key string) string { return strings.ReplaceAll(key, " ", `\x20`) }

func clip(s string, n int, empty string) string {
	if s == "" {
		return empty
	}
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// num prints a figure with a k/M suffix for people.
func num(f float64) string {
	switch {
	case f >= 1e9:
		return fmt.Sprintf("%.3gG", f/1e9)
	case f >= 1e6:
		return fmt.Sprintf("%.3gM", f/1e6)
	case f >= 1e4:
		return fmt.Sprintf("%.3gk", f/1e3)
	case f >= 100 || f == 0:
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.3g", f)
}

func bytesText(f float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", f)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
