package schema

import (
	"os"
	"strings"
	"testing"
)

// Every key the loader accepts is documented in docs/schema.md (as `key`).
func TestEveryKeyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/schema.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]string{topKeys, tableKeys, queryKeys, familyKeys, clientKeys,
		{"profiles", "max_size", "writes_by_entity", "calendar", "from", "to", "where", "multi_get", "direction", "profile"}}
	for _, list := range keys {
		for _, k := range list {
			if !strings.Contains(string(doc), "`"+k+"`") {
				t.Errorf("key %q is not documented in docs/schema.md", k)
			}
		}
	}
	for _, f := range []string{"text(field)", "pad(field, n)", "bitrev(field)", "hash(a, b, ..., n)"} {
		if !strings.Contains(string(doc), "`"+f) {
			t.Errorf("key part %s is not documented in docs/schema.md", f)
		}
	}
}
