package cost

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the estimate as stable, indented JSON (the field names
// of Estimate, TableEstimate and EntityTotal).
func WriteJSON(w io.Writer, est Estimate) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(est); err != nil {
		return fmt.Errorf("cost: write JSON: %w", err)
	}
	return nil
}

// WriteText writes the estimate for people: a table per table, then totals.
func WriteText(w io.Writer, est Estimate) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "table\trole\trows/rec\tcells/rec\tkey B\tvalue B/rec\tbytes/rec\toverhead\tx%d replicas\t\n", est.Replication)
	for _, t := range est.Tables {
		name := t.Table
		if t.Shared {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.0f\t%.0f\tx%.1f\t%.0f\t\n",
			name, t.Role, trim(t.RowsPerRecord), trim(t.CellsPerRecord), t.KeyBytes, t.ValueBytes, t.Bytes, t.Overhead, t.Replicated)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("cost: format table: %w", err)
	}
	b.WriteString("\nBytes are KeyValues before block encoding and compression: 20 + row + family + qualifier + value per cell.\n")
	for _, t := range est.Tables {
		if t.Shared {
			b.WriteString("* fast counter rows are shared by many records: the figure is one counter's rows, not in the totals.\n")
			break
		}
	}
	for _, t := range est.Tables {
		switch t.CounterMode {
		case "exact":
			fmt.Fprintf(&b, "%s (counter, mode exact): one contribution cell per record in the counter rows; they grow with the records and are in the totals.\n", t.Table)
		case "bounded":
			fmt.Fprintf(&b, "%s (counter, mode bounded): the figure is the record each primary row keeps of its counts (in the totals); the counter rows themselves stay one state cell per log stream, whatever the traffic.\n", t.Table)
		}
	}
	for _, e := range est.Entities {
		fmt.Fprintf(&b, "\n%s: %.0f bytes per record in all tables (%.0f of them values, overhead x%.1f); at replication %d, %.0f bytes\n",
			e.Entity, e.Bytes, e.ValueBytes, e.Overhead, est.Replication, e.Replicated)
		if e.Records > 0 {
			fmt.Fprintf(&b, "  %d records: %s, %s at replication %d\n", e.Records, human(e.TotalBytes), human(e.TotalReplicated), est.Replication)
		}
	}
	if est.TotalBytes > 0 && len(est.Entities) > 1 {
		fmt.Fprintf(&b, "\nall entities: %s, %s at replication %d (fast counters aside)\n", human(est.TotalBytes), human(est.TotalReplicated), est.Replication)
	}
	var notes []string
	for _, t := range est.Tables {
		for _, a := range t.Assumptions {
			notes = append(notes, t.Table+": "+a)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nassumptions:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("cost: write text: %w", err)
	}
	return nil
}

// trim prints whole numbers without decimals and others with two.
func trim(f float64) string {
	if math.Abs(f) >= 1<<53 {
		return fmt.Sprintf("%.4g", f) // past exact integers; int64(f) may overflow
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}

func human(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	if n >= 1024 {
		return fmt.Sprintf("%.3g %s", n, units[i]) // beyond EiB: no more units
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// WriteMeasurementText writes a Measure result for people.
func WriteMeasurementText(w io.Writer, m Measurement) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nmeasured: %d synthetic records per entity\n", m.Records)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "table\trows\tcells\twritten B/rec\testimate B/rec\ton disk B/rec\t\n")
	for _, t := range m.Tables {
		disk := "n/a"
		if t.DiskBytes >= 0 {
			disk = fmt.Sprintf("%.1f", t.DiskPerRecord)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%s\t\n", t.Table, t.Rows, t.Cells, t.LogicalPerRecord, t.EstimatePerRecord, disk)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("cost: format measurement: %w", err)
	}
	if !m.DiskReported {
		b.WriteString("the store does not report disk usage: on-disk figures are not available\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("cost: write measurement: %w", err)
	}
	return nil
}
