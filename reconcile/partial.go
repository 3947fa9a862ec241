package reconcile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Partial is the result of one part of a plan: the expected checksums of
// every range its primary rows reach, the stored checksums of its own
// ranges, and its report (rows, live copies found and repaired, rows read).
// Partial results of every part merge into the plan's report.
type Partial struct {
	Format int    `json:"format"`
	Plan   string `json:"plan"` // Plan.ID of the plan it ran
	Part   int    `json:"part"`
	// PrimaryParts are the primary ranges whose rows were derived.
	PrimaryParts []int `json:"primary_parts"`
	// OwnedOnly: expected checksums were kept for the part's own ranges
	// only (a single-process --shard run, which reads every primary row).
	OwnedOnly bool          `json:"owned_only,omitempty"`
	Ranges    []RangeResult `json:"ranges"`
	Report    *Report       `json:"report"`
}

// RangeResult is what a part found for one range of a derived table.
type RangeResult struct {
	Table  string `json:"table"`
	Range  int    `json:"range"`
	Expect *Acc   `json:"expect,omitempty"`
	Stored *Acc   `json:"stored,omitempty"`
}

// PartialFile is the name of part i's result in a results directory.
func PartialFile(dir string, part int) string {
	return filepath.Join(dir, fmt.Sprintf("part-%05d.json", part))
}

// WritePartial writes a part's result into dir, replacing an earlier run's.
func WritePartial(dir string, r *Partial) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reconcile: results: %w", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(PartialFile(dir, r.Part), append(b, '\n')); err != nil {
		return fmt.Errorf("reconcile: results: %w", err)
	}
	return nil
}

// ReadPartials reads every part-*.json file of dir, in part order.
func ReadPartials(dir string) ([]*Partial, error) {
	names, err := filepath.Glob(filepath.Join(dir, "part-*.json"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("reconcile: results: %w", err)
		}
	}
	sort.Strings(names)
	var out []*Partial
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("reconcile: results: %w", err)
		}
		r, err := ParsePartial(b)
		if err != nil {
			return nil, fmt.Errorf("reconcile: results %s: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ParsePartial decodes a partial result file's bytes; unknown fields are
// errors. Whether it fits a plan, Merge checks.
func ParsePartial(b []byte) (*Partial, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Partial
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the result")
	}
	if r.Format != planFormat || r.Report == nil {
		return nil, fmt.Errorf("not a partial result of format %d", planFormat)
	}
	if r.Report.Kinds == nil {
		r.Report.Kinds = map[string]*Counts{}
	}
	for k, c := range r.Report.Kinds {
		if c == nil {
			return nil, fmt.Errorf("kind %s has no counts", k)
		}
	}
	return &r, nil
}
