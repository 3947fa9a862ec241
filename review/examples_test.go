package review

import (
	"os"
	"testing"

	"github.com/denorm/denorm/schema"
)

func loadExample(t *testing.T, name string) *schema.Plan {
	t.Helper()
	path := "../examples/" + name
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not written yet: %v", path, err)
	}
	p, err := schema.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return p
}

func TestGoodExamplesHaveNoErrors(t *testing.T) {
	for _, name := range []string{"orders.yaml", "device_events.yaml"} {
		t.Run(name, func(t *testing.T) {
			rep := Review(loadExample(t, name))
			for _, f := range rep.Findings {
				t.Logf("%s", f)
			}
			if rep.HasErrors() {
				t.Errorf("%s: want no error findings", name)
			}
		})
	}
}
