package doctor

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/review"
)

var update = flag.Bool("update", false, "rewrite docs/doctor.md from the cluster-only rules")

const doctorDoc = "../docs/doctor.md"

func TestDoctorDoc(t *testing.T) {
	want := RulesMarkdown()
	if *update {
		if err := os.WriteFile(doctorDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(doctorDoc)
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./doctor -run TestDoctorDoc -update)", doctorDoc, err)
	}
	if string(got) != want {
		t.Errorf("docs/doctor.md is out of date: run go test ./doctor -run TestDoctorDoc -update")
	}
}

// Cluster-only ids must not collide with the review's, and every id the
// doctor emits must be documented in one of the two documents.
func TestClusterRuleIDs(t *testing.T) {
	doc := RulesMarkdown()
	for _, r := range ClusterRules() {
		if _, ok := review.Lookup(r.ID); ok {
			t.Errorf("%s is also a review rule", r.ID)
		}
		if r.Fix == "" || r.Symptom == "" || r.Cause == "" {
			t.Errorf("%s is incomplete", r.ID)
		}
		if !strings.Contains(doc, "### "+r.ID+"\n") {
			t.Errorf("%s has no section", r.ID)
		}
	}
}
