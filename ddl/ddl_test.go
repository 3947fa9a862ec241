package ddl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
)

const base = `
name: t
entities:
  event:
    key: id
    version: version
    version_kind: epoch_ms
    fields: {id: string, device: string, at: timestamp}
tables:
`

func parse(t *testing.T, tables string) *schema.Plan {
	t.Helper()
	p, err := schema.Parse("test.yaml", []byte(base+tables))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

func TestSaltSplitsOnePerBucket(t *testing.T) {
	p := parse(t, `
  events:
    role: primary
    entity: event
    rowkey: [salt(device, 4), device, reverse(at), id]
    families:
      d: {versions: 3, ttl: 7d, compression: snappy, encoding: FAST_DIFF, blocksize: 16KiB, bloom: ROWCOL, in_memory: true}
`)
	sts, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `create "events", {NAME => "d", VERSIONS => 3, TTL => 604800, COMPRESSION => "SNAPPY", DATA_BLOCK_ENCODING => "FAST_DIFF", BLOCKSIZE => "16384", BLOOMFILTER => "ROWCOL", IN_MEMORY => "true"}, {SPLITS => ["\x01", "\x02", "\x03"]}`
	if len(sts) != 1 || sts[0].Text != want {
		t.Fatalf("got\n%s\nwant\n%s", sts[0].Text, want)
	}
	if len(sts[0].SplitKeys) != 3 {
		t.Errorf("%d split keys, want 3 (4 buckets)", len(sts[0].SplitKeys))
	}
}

func TestHashPresplitEvenlySpaced(t *testing.T) {
	p := parse(t, `
  events:
    role: primary
    entity: event
    rowkey: [hash(device, 2), device, reverse(at), id]
    presplit: 4
    durability: async_wal
    families:
      d: {}
`)
	sts, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	txt := sts[0].Text
	for _, want := range []string{`"@\x00"`, `"\x80\x00"`, `"\xC0\x00"`, `DURABILITY => "ASYNC_WAL"`, `{NAME => "d", VERSIONS => 1}`} {
		if !strings.Contains(txt, want) {
			t.Errorf("statement lacks %s:\n%s", want, txt)
		}
	}
	if len(sts[0].SplitKeys) != 3 {
		t.Errorf("%d split keys, want 3", len(sts[0].SplitKeys))
	}
}

func TestPlainKeyPresplitHasNoSplitsButANote(t *testing.T) {
	p := parse(t, `
  events:
    role: primary
    entity: event
    rowkey: [device, at, id]
    presplit: 8
    families:
      d: {}
`)
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "SPLITS") {
		t.Errorf("plain key must get no SPLITS:\n%s", out)
	}
	if !strings.Contains(out, "# events: presplit 8 asked") {
		t.Errorf("missing note:\n%s", out)
	}
}

func TestOrdersExample(t *testing.T) {
	p, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Skipf("examples/orders.yaml: %v", err)
	}
	sts, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != len(p.Tables) {
		t.Fatalf("%d statements for %d tables", len(sts), len(p.Tables))
	}
	for _, st := range sts {
		if !strings.HasPrefix(st.Text, "create "+QuoteString(st.Table)+", {NAME => ") {
			t.Errorf("odd statement: %s", st.Text)
		}
	}
}
