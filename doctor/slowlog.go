package doctor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// SlowCall is one slow or oversized RPC, from either the shell's
// get_slowlog_responses JSON or an older server's (responseTooSlow) line.
type SlowCall struct {
	Line         int // 1-based line of the input it came from; 0 for a whole-file JSON array
	Method       string
	ProcessingMs float64
	QueueMs      float64
	ResponseSize float64
	Client       string
	Param        string
	Table        string // from the region name inside param, when present
	Region       string // encoded region name, when present
	MultiGets    float64
	MultiMuts    float64
	TooLarge     bool // a (responseTooLarge) line
}

// ParseSlowLog reads slow-log records. It accepts a JSON array of records,
// one JSON record per line, or log lines holding (responseTooSlow): {...} or
// (responseTooLarge): {...}; any other line is skipped. Only a read error
// fails.
func ParseSlowLog(r io.Reader) ([]SlowCall, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read slow log: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var recs []map[string]json.RawMessage
		if json.Unmarshal(trimmed, &recs) == nil {
			out := make([]SlowCall, 0, len(recs))
			for _, rec := range recs {
				out = append(out, slowCallFrom(rec))
			}
			return out, nil
		}
	}
	var out []SlowCall
	br := bufio.NewReader(bytes.NewReader(data))
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if c, ok := parseSlowLine(line); ok {
			c.Line = n
			out = append(out, c)
		}
		if err != nil {
			break
		}
	}
	return out, nil
}

func parseSlowLine(line string) (SlowCall, bool) {
	tooLarge := strings.Contains(line, "(responseTooLarge)")
	i := strings.Index(line, "{")
	if i < 0 {
		return SlowCall{}, false
	}
	if !tooLarge && !strings.Contains(line, "(responseTooSlow)") && strings.TrimSpace(line[:i]) != "" {
		return SlowCall{}, false
	}
	var rec map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(line[i:]))
	if dec.Decode(&rec) != nil {
		return SlowCall{}, false
	}
	c := slowCallFrom(rec)
	c.TooLarge = tooLarge
	return c, true
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

func slowCallFrom(rec map[string]json.RawMessage) SlowCall {
	var c SlowCall
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
		case "param":
			c.Param = jsonString(raw)
		case "regionname":
			c.Param += " " + jsonString(raw) + " "
		case "multigetscount":
			c.MultiGets, _ = jsonNumber(raw)
		case "multimutationscount":
			c.MultiMuts, _ = jsonNumber(raw)
		}
	}
	if m := regionName.FindStringSubmatch(c.Param); m != nil {
		c.Table, c.Region = m[1], m[2]
	}
	return c
}
