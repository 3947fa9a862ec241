package doctor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// SlowCall is one slow or oversized RPC, from a region server's online slow
// log (the ring buffer the shell's get_slowlog_responses and Thrift2's
// getSlowLogResponses read) or from its (responseTooSlow) log line.
type SlowCall struct {
	Line         int // 1-based line of the input it came from; 0 for a whole-file JSON array
	Method       string
	ProcessingMs float64
	QueueMs      float64
	ResponseSize float64
	Client       string
	Server       string // the region server that kept the record, when the input says
	Param        string
	Table        string // from the region name inside param, when present
	Region       string // encoded region name, when present
	MultiGets    float64
	MultiMuts    float64
	TooLarge     bool // over the response size limit: a (responseTooLarge...) line or a LARGE_LOG record
}

// ParseSlowLog reads slow-log records. It accepts a JSON array of records,
// one JSON record per line, or log lines holding (responseTooSlow): {...} or
// (responseTooLarge): {...}; any other line is skipped, since a region
// server's log holds many. Input that cannot be a slow log is an error
// naming where: an empty file, a JSON array that does not parse, a record
// line whose JSON does not parse, or bytes that are not text and hold no
// record.
func ParseSlowLog(r io.Reader) ([]SlowCall, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read slow log: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("slow log is empty")
	}
	if trimmed[0] == '[' {
		var recs []map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &recs); err != nil {
			return nil, fmt.Errorf("slow log: the JSON array of records does not parse: %s", jsonWhere(data, err))
		}
		out := make([]SlowCall, 0, len(recs))
		for _, rec := range recs {
			out = append(out, slowCallFrom(rec))
		}
		return out, nil
	}
	var out []SlowCall
	// A live log may hold a record cut short (the server was writing it,
	// or a log line limit cut it); among good records it is skipped. A
	// file of nothing but such lines is not a slow log that can be read.
	var firstBad error
	br := bufio.NewReader(bytes.NewReader(data))
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		c, ok, bad := parseSlowLine(line)
		if bad != nil && firstBad == nil {
			firstBad = fmt.Errorf("slow log line %d: a record whose JSON does not parse: %v", n, bad)
		}
		if ok {
			c.Line = n
			out = append(out, c)
		}
		if err != nil {
			break
		}
	}
	if len(out) == 0 && firstBad != nil {
		return nil, firstBad
	}
	if len(out) == 0 && (!utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0) {
		return nil, fmt.Errorf("slow log: not text and no record in it (want a JSON array of records, JSON lines, or region server log lines)")
	}
	return out, nil
}

// jsonWhere turns a JSON error's byte offset into a line and column.
func jsonWhere(data []byte, err error) string {
	var se *json.SyntaxError
	var off int64
	switch {
	case errors.As(err, &se):
		off = se.Offset
	default:
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return err.Error()
		}
		off = te.Offset
	}
	// The offset counts from the trimmed start; leading space is rare and
	// only shifts the column.
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d column %d: %v", line, col, err)
}

// responseTag is the marker a region server puts before the JSON of a
// slow or large call: (responseTooSlow), (responseTooLarge), or, for a call
// that is both, (responseTooLarge & TooSlow).
var responseTag = regexp.MustCompile(`\(response(Too(?:Slow|Large))(?: & (Too(?:Slow|Large)))?\)`)

// parseSlowLine reads one line: ok when it holds a record; bad when it
// has the shape of one (a JSON line, or a response tag and JSON) whose JSON
// does not parse.
func parseSlowLine(line string) (c SlowCall, ok bool, bad error) {
	i := strings.Index(line, "{")
	if i < 0 {
		return SlowCall{}, false, nil
	}
	tag := responseTag.FindStringSubmatch(line[:i])
	if tag == nil && strings.TrimSpace(line[:i]) != "" {
		return SlowCall{}, false, nil
	}
	var rec map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(line[i:]))
	if err := dec.Decode(&rec); err != nil {
		return SlowCall{}, false, err
	}
	c = slowCallFrom(rec)
	if tag != nil {
		c.TooLarge = tag[1] == "TooLarge" || tag[2] == "TooLarge"
	}
	return c, true, nil
}

// slowKey folds the two spellings (startTime, starttimems, start_time) into
// one: lower case, no underscores, no trailing "ms".
func slowKey(k string) string {
	k = strings.ToLower(strings.ReplaceAll(k, "_", ""))
	if strings.HasSuffix(k, "timems") {
		k = strings.TrimSuffix(k, "ms")
	}
	return k
}

// regionName matches "table,startkey,regionid.encoded." inside a slow call's
// param; the start key may hold anything but a comma is rare enough to stop at.
var regionName = regexp.MustCompile(`([A-Za-z0-9_.:-]+),[^,]*,[0-9]+\.([0-9a-f]{32})\.`)

// scanTable reads the table out of a log line's scandetails, "table: t
// region: t,start,id.enc.", which the server adds to every Scan, including
// the follow-up calls whose param holds only a scanner id.
var scanTable = regexp.MustCompile(`^table: (\S+)`)

func slowCallFrom(rec map[string]json.RawMessage) SlowCall {
	var c SlowCall
	var details string
	for k, raw := range rec {
		switch slowKey(k) {
		case "methodname", "method":
			c.Method = jsonString(raw)
		case "processingtime":
			c.ProcessingMs, _ = jsonNumber(raw)
		case "queuetime":
			c.QueueMs, _ = jsonNumber(raw)
		case "responsesize":
			c.ResponseSize, _ = jsonNumber(raw)
		case "clientaddress", "client":
			c.Client = jsonString(raw)
		case "server":
			c.Server = jsonString(raw)
		case "param":
			c.Param = jsonString(raw)
		case "regionname":
			c.Param += " " + jsonString(raw) + " "
		case "scandetails":
			details = jsonString(raw)
		case "multigetscount", "multi.gets":
			c.MultiGets, _ = jsonNumber(raw)
		case "multimutationscount", "multi.mutations":
			c.MultiMuts, _ = jsonNumber(raw)
		case "logtype":
			c.TooLarge = strings.Contains(strings.ToUpper(jsonString(raw)), "LARGE")
		}
	}
	if m := regionName.FindStringSubmatch(c.Param); m != nil {
		c.Table, c.Region = m[1], m[2]
	} else if m := regionName.FindStringSubmatch(details); m != nil {
		c.Table, c.Region = m[1], m[2]
	} else if m := scanTable.FindStringSubmatch(details); m != nil {
		c.Table = m[1]
	}
	return c
}
