package review

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
)

// SARIF 2.1.0, only the parts code-scanning tools read: one run, the
// catalogue as the driver's rules, one result per finding.

const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name"`
	ShortDescription     sarifText       `json:"shortDescription"`
	FullDescription      sarifText       `json:"fullDescription"`
	Help                 sarifText       `json:"help"`
	DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// sarifLevel maps a severity to SARIF's level names, which call info "note".
func sarifLevel(s Severity) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes the report as a SARIF 2.1.0 log.
func WriteSARIF(w io.Writer, r Report) error {
	cat := Catalogue()
	index := make(map[string]int, len(cat))
	driver := sarifDriver{Name: "denorm", Rules: make([]sarifRule, 0, len(cat))}
	for i, rule := range cat {
		index[rule.ID] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   rule.ID,
			Name:                 rule.ID,
			ShortDescription:     sarifText{rule.Title},
			FullDescription:      sarifText{rule.Symptom + " " + rule.Cause},
			Help:                 sarifText{rule.Fix},
			DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(rule.Severity)},
		})
	}
	results := make([]sarifResult, 0, len(r.Findings))
	for _, f := range r.Findings {
		idx, ok := index[f.Rule]
		if !ok {
			return fmt.Errorf("review: finding names rule %q, which is not in the catalogue", f.Rule)
		}
		msg := f.Message
		if f.Fix != "" {
			msg += " Fix: " + f.Fix
		}
		res := sarifResult{RuleID: f.Rule, RuleIndex: idx, Level: sarifLevel(f.Severity), Message: sarifText{msg}}
		if r.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(r.File)}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
			}
			res.Locations = []sarifLocation{loc}
		}
		results = append(results, res)
	}
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(log); err != nil {
		return fmt.Errorf("review: write SARIF report: %w", err)
	}
	return nil
}

// artifactURI turns a file name into a relative URI reference: forward
// slashes, and spaces or other reserved characters escaped.
func artifactURI(name string) string {
	return (&url.URL{Path: filepath.ToSlash(name)}).String()
}
