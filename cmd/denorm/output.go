package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/denorm/denorm/store"
)

// The --format values of the data commands.
const (
	formatText = "text"
	formatJSON = "json"
)

func addFormatFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "format", formatText, "output format: text (for people) or json (stable, for programs)")
}

func checkFormat(f string) error {
	if f != formatText && f != formatJSON {
		return usageErrorf("--format %q: want text or json", f)
	}
	return nil
}

// jsonRowsDoc is documented in README.md ("JSON output"); change it only by
// adding fields. Printable fields use the HBase shell's \xNN escapes; the
// _base64 fields carry the exact bytes (standard encoding, with padding).
type jsonRowsDoc struct {
	Table string    `json:"table"`
	Rows  []jsonRow `json:"rows"`
	Count int       `json:"count"`
}

type jsonRow struct {
	Key       string     `json:"key"`
	KeyBase64 string     `json:"key_base64"`
	Cells     []jsonCell `json:"cells"`
	// Decoded is the key read by the schema (--schema, without --raw).
	Decoded *decodedKey `json:"decoded,omitempty"`
}

type jsonCell struct {
	Family          string `json:"family"`
	Qualifier       string `json:"qualifier"`
	QualifierBase64 string `json:"qualifier_base64"`
	Timestamp       int64  `json:"timestamp"`
	Value           string `json:"value"`
	ValueBase64     string `json:"value_base64"`
	// Decoded is the cell read by the schema (--schema, without --raw).
	Decoded *decodedCell `json:"decoded,omitempty"`
}

func toJSONRow(r store.Row, dec *rowDecoder) jsonRow {
	jr := jsonRow{
		Key:       store.Printable(r.Key),
		KeyBase64: base64.StdEncoding.EncodeToString(r.Key),
		Cells:     make([]jsonCell, 0, len(r.Cells)),
	}
	for _, c := range r.Cells {
		jr.Cells = append(jr.Cells, jsonCell{
			Family:          c.Family,
			Qualifier:       store.Printable(c.Qualifier),
			QualifierBase64: base64.StdEncoding.EncodeToString(c.Qualifier),
			Timestamp:       c.Timestamp,
			Value:           store.Printable(c.Value),
			ValueBase64:     base64.StdEncoding.EncodeToString(c.Value),
		})
		if dec != nil {
			dc := dec.cell(c)
			jr.Cells[len(jr.Cells)-1].Decoded = &dc
		}
	}
	if dec != nil {
		dk := dec.key(r.Key)
		jr.Decoded = &dk
	}
	return jr
}

// rowPrinter writes rows as they arrive, so that a long scan needs no more
// memory than one row, in either format.
type rowPrinter struct {
	w      *bufio.Writer
	format string
	table  string
	isGet  bool // get prints COLUMN/CELL, scan prints ROW/COLUMN+CELL, like the HBase shell
	count  int
	// dec, when set, reads keys and cells by the schema: JSON gains
	// decoded objects, text prints each row's key once, by its parts, and
	// its cells by column and declared type.
	dec *rowDecoder
}

func newRowPrinter(w io.Writer, format, table string, isGet bool) *rowPrinter {
	return &rowPrinter{w: bufio.NewWriter(w), format: format, table: table, isGet: isGet}
}

// textWidth is the width of the first column of text output. Longer keys
// push the rest of the line right rather than being cut.
const textWidth = 30

func (p *rowPrinter) begin() {
	if p.format == formatJSON {
		fmt.Fprintf(p.w, `{"table":%s,"rows":[`, mustJSON(p.table))
		return
	}
	if p.dec != nil {
		return // each row prints its own heading
	}
	if p.isGet {
		p.textLine("COLUMN", "CELL")
	} else {
		p.textLine("ROW", "COLUMN+CELL")
	}
}

func (p *rowPrinter) row(r store.Row) error {
	if p.format == formatJSON {
		if p.count > 0 {
			p.w.WriteByte(',')
		}
		b, err := json.Marshal(toJSONRow(r, p.dec))
		if err != nil {
			return fmt.Errorf("encode row %s: %w", store.Printable(r.Key), err)
		}
		p.w.Write(b)
	} else if p.dec != nil {
		p.w.WriteString("ROW " + p.dec.key(r.Key).text() + "\n")
		for _, c := range r.Cells {
			dc := p.dec.cell(c)
			p.textLine(" "+dc.label(), fmt.Sprintf("timestamp=%d, value=%s", c.Timestamp, dc.text()))
		}
	} else {
		key := store.Printable(r.Key)
		for _, c := range r.Cells {
			col := c.Family + ":" + store.Printable(c.Qualifier)
			if p.isGet {
				p.textLine(" "+col, fmt.Sprintf("timestamp=%d, value=%s", c.Timestamp, store.Printable(c.Value)))
			} else {
				p.textLine(" "+key, fmt.Sprintf("column=%s, timestamp=%d, value=%s", col, c.Timestamp, store.Printable(c.Value)))
			}
		}
	}
	p.count++
	return nil
}

func (p *rowPrinter) textLine(left, right string) {
	pad := textWidth - len(left)
	if pad < 1 {
		pad = 1
	}
	p.w.WriteString(left)
	p.w.WriteString(strings.Repeat(" ", pad))
	p.w.WriteString(right)
	p.w.WriteByte('\n')
}

// end closes the document and flushes. A scan that failed half way still
// ends its JSON, so what was read stays parseable; the exit code and stderr
// say that it is incomplete.
func (p *rowPrinter) end() error {
	if p.format == formatJSON {
		fmt.Fprintf(p.w, `],"count":%d}`+"\n", p.count)
	} else {
		fmt.Fprintf(p.w, "%d row(s)\n", p.count)
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings and plain structs reach here; Marshal cannot fail on them.
		return `""`
	}
	return string(b)
}

// writeJSON writes one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
