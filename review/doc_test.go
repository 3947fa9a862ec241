package review

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/rules.md from the catalogue")

const rulesDoc = "../docs/rules.md"

// TestRulesDoc keeps docs/rules.md equal to the catalogue: run with -update
// after changing a rule.
func TestRulesDoc(t *testing.T) {
	want := RulesMarkdown()
	if *update {
		if err := os.WriteFile(rulesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(rulesDoc)
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./review -run TestRulesDoc -update)", rulesDoc, err)
	}
	doc := string(got)

	// Section by section first, for a useful message.
	heading := regexp.MustCompile(`(?m)^## (\S+)$`)
	sections := map[string]string{}
	locs := heading.FindAllStringSubmatchIndex(doc, -1)
	for i, m := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		sections[doc[m[2]:m[3]]] = doc[m[0]:end]
	}
	ids := map[string]bool{}
	for _, r := range Catalogue() {
		ids[r.ID] = true
		sec, ok := sections[r.ID]
		if !ok {
			t.Errorf("docs/rules.md has no section for rule %s", r.ID)
			continue
		}
		for _, part := range []string{"**Symptom.**", "**Cause.**", "**Fix.**", "**What it reads.**", "```yaml"} {
			if !strings.Contains(sec, part) {
				t.Errorf("section %s lacks %s", r.ID, part)
			}
		}
	}
	for id := range sections {
		if !ids[id] {
			t.Errorf("docs/rules.md has a section %s, which is no rule", id)
		}
	}
	if doc != want {
		t.Errorf("docs/rules.md is out of date with the catalogue: run go test ./review -run TestRulesDoc -update")
	}
}
