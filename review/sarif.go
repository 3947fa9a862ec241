package review

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0, only the parts code-scanning tools read: one run, the
// catalogue as the driver's rules, one result per finding.

const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	// InformationURI is the project's home, the driver's informationUri.
	InformationURI = "https://github.com/denorm/denorm"
	// rulesDocURI is docs/rules.md there; each rule's helpUri is its section.
	rulesDocURI = InformationURI + "/blob/main/docs/rules.md"
)

// RuleHelpURI is the address of a rule's section of docs/rules.md (headings
// are the rule ids, so the anchor is the id).
func RuleHelpURI(id string) string { return rulesDocURI + "#" + id }

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
	Version        string      `json:"version,omitempty"`
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
	HelpURI              string          `json:"helpUri"`
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
	version := r.ToolVersion
	if version == "" {
		version = "dev"
	}
	driver := sarifDriver{Name: "denorm", Version: version, InformationURI: InformationURI, Rules: make([]sarifRule, 0, len(cat))}
	for i, rule := range cat {
		index[rule.ID] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   rule.ID,
			Name:                 rule.ID,
			ShortDescription:     sarifText{rule.Title},
			FullDescription:      sarifText{rule.Symptom + " " + rule.Cause},
			Help:                 sarifText{rule.Fix},
			HelpURI:              RuleHelpURI(rule.ID),
			DefaultConfiguration: sarifRuleConfig{Level: sarifLevel(rule.Severity)},
		})
	}
	results := make([]sarifResult, 0, len(r.Findings))
	for _, f := range r.Findings {
		idx, ok := index[f.Rule]
		if !ok {
			return fmt.Errorf("review: finding names rule %q, which is not in the catalogue", f.Rule)
		}
		// The message says what is wrong and stops: the fix is the rule's
		// help, which viewers show next to it.
		res := sarifResult{RuleID: f.Rule, RuleIndex: idx, Level: sarifLevel(f.Severity), Message: sarifText{f.Message}}
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

// artifactURI turns what was reviewed into an artifact URI: a relative
// file name stays a relative reference (forward slashes, reserved
// characters escaped), an absolute one becomes a file:// URI, and a URI
// (a live table, hbase://host:9090/t) is kept.
func artifactURI(name string) string {
	if u, err := url.Parse(name); err == nil && len(u.Scheme) > 1 && u.Host != "" {
		return u.String()
	}
	slashed := filepath.ToSlash(name)
	if filepath.IsAbs(name) || strings.HasPrefix(slashed, "/") {
		if !strings.HasPrefix(slashed, "/") {
			slashed = "/" + slashed // C:/x becomes /C:/x
		}
		return (&url.URL{Scheme: "file", Path: slashed}).String()
	}
	return (&url.URL{Path: path.Clean(slashed)}).String()
}
