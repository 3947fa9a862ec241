package review

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/denorm/denorm/schema"
)

// FuzzReview feeds arbitrary schema files through the loader and, when they
// load, through every rule and every output format: nothing may panic, every
// finding must name a catalogue rule, and JSON and SARIF must parse.
func FuzzReview(f *testing.F) {
	for _, r := range Catalogue() {
		f.Add([]byte(r.Example))
	}
	f.Add([]byte(cleanExample()))
	if files, _ := filepath.Glob("../examples/*.yaml"); len(files) > 0 {
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	known := map[string]bool{}
	for _, r := range Catalogue() {
		known[r.ID] = true
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := schema.Parse("fuzz.yaml", src)
		if err != nil {
			return
		}
		rep := Review(p)
		for _, fd := range rep.Findings {
			if !known[fd.Rule] {
				t.Fatalf("finding with unknown rule %q", fd.Rule)
			}
			if fd.Line < 0 {
				t.Fatalf("negative line: %+v", fd)
			}
		}
		for _, format := range Formats() {
			var buf bytes.Buffer
			if err := Write(&buf, rep, format); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if format != "text" && !json.Valid(buf.Bytes()) {
				t.Fatalf("%s output is not JSON", format)
			}
		}
	})
}
