package schema

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize bounds what Parse accepts; a schema is a few kilobytes.
const MaxFileSize = 4 << 20

// Load reads, checks and compiles the schema file at path. A file with
// problems returns Errors listing all of them.
func Load(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schema: reading %s: %w", path, err)
	}
	return Parse(path, data)
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// Parse checks and compiles a schema held in memory; name is used in error
// messages and as Plan.File.
func Parse(name string, data []byte) (*Plan, error) {
	if len(data) > MaxFileSize {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("file is %d bytes, more than the %d a schema may have", len(data), MaxFileSize)}}
	}
	doc, yerr := readYAML(name, data)
	if yerr != nil {
		return nil, Errors{yerr}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, Errors{{File: name, Msg: "the file is empty"}}
	}
	d := &decoder{file: name}
	p := d.plan(doc.Content[0])
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	p.assignSlots()
	return p, nil
}

// readYAML parses the document into nodes. The YAML library is outside
// code; whatever it does with hostile input, the caller gets an error rather
// than a crash. (Only this call is guarded, so the fuzzer still sees panics
// in denorm's own checks.)
func readYAML(name string, data []byte) (doc *yaml.Node, e *Error) {
	defer func() {
		if r := recover(); r != nil {
			doc, e = nil, &Error{File: name, Msg: fmt.Sprintf("cannot read the YAML: %v", r)}
		}
	}()
	doc = &yaml.Node{}
	if err := yaml.Unmarshal(data, doc); err != nil {
		e = &Error{File: name, Msg: err.Error()}
		if line, col, msg, ok := syntaxPosition(data); ok {
			// The position and words of the offending token, and the first
			// parser's words after them (without its misleading line).
			e.Line, e.Column = line, col
			e.Msg = fmt.Sprintf("%s (%s)", msg, yamlLine.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), ""))
		} else if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
		}
		return nil, e
	}
	return doc, nil
}

var topKeys = []string{"name", "description", "entities", "tables", "queries", "workload", "client", "ops"}

func (d *decoder) plan(root *yaml.Node) *Plan {
	p := &Plan{File: d.file, Workload: &Workload{Lines: Lines{}}, Client: &Client{Lines: Lines{}}, Ops: &Ops{Lines: Lines{}}, Lines: Lines{}}
	entries, ok := d.mapping(root, "", topKeys...)
	if !ok {
		return p
	}
	sections := map[string]entry{}
	for _, e := range entries {
		sections[e.Key] = e
		p.Lines[e.Key] = e.KeyN.Line
	}
	if e, ok := sections["name"]; ok {
		p.Name, _ = d.str(e.Value, "name")
	}
	if e, ok := sections["description"]; ok {
		p.Description, _ = d.str(e.Value, "description")
	}
	// Sections are read in dependency order whatever their order in the file:
	// tables need entities, queries need tables.
	if e, ok := sections["entities"]; ok {
		d.entities(p, e.Value)
	} else {
		d.errLine(0, "entities", "the schema declares no entities")
	}
	if e, ok := sections["ops"]; ok {
		d.ops(p, e.Value)
	}
	if e, ok := sections["tables"]; ok {
		d.tables(p, e.Value)
	} else {
		d.errLine(0, "tables", "the schema declares no tables")
	}
	if e, ok := sections["queries"]; ok {
		d.queries(p, e.Value)
	}
	if e, ok := sections["workload"]; ok {
		d.workload(p, e.Value, e.KeyN.Line)
	}
	if e, ok := sections["client"]; ok {
		d.client(p, e.Value, e.KeyN.Line)
	}
	d.checkProfiles(p) // queries name client profiles, read after them
	return p
}
