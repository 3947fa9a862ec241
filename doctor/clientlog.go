package doctor

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// LogEvent is one line of a client (or server) log that carries an
// anti-pattern's signature.
type LogEvent struct {
	Rule   string // the rule id the signature points at
	Line   int    // 1-based
	Text   string // the line, trimmed and cut to a readable length
	Region string // encoded region name, when the line names one
	Server string // host:port or server name, when the line names one
}

// logSignature ties a piece of exception text to a rule. Order matters: the
// first match wins, and RetriesExhausted lines often quote another
// exception as their cause, which is the more specific signal.
type logSignature struct {
	rule string
	re   *regexp.Regexp
}

var logSignatures = []logSignature{
	{"row-unbounded", regexp.MustCompile(`RowTooBigException|Max row size allowed`)},
	{"cell-huge", regexp.MustCompile(`KeyValue size too large|exceeds limit of [0-9]+ bytes`)},
	{"scanner-lease-expired", regexp.MustCompile(`UnknownScannerException|Unknown scanner '|ScannerTimeoutException|ms passed since the last invocation|LeaseException|lease '[^']*' does not exist`)},
	{"memstore-blocking", regexp.MustCompile(`RegionTooBusyException|Over memstore limit|Blocking updates for`)},
	{"call-queue-full", regexp.MustCompile(`CallQueueTooBigException|Call queue is full`)},
	{"store-files-blocking", regexp.MustCompile(`too many store files`)},
	{"retries-exhausted", regexp.MustCompile(`RetriesExhaustedWithDetailsException|RetriesExhaustedException|Failed [0-9]+ actions?:`)},
}

var (
	logRegion = regexp.MustCompile(`regionName=([^,\s]+)|Region ([^\s]+) has too many store files|it belong to region = (\S+)`)
	// A server name is "host,port,startcode" (as a real 2.5 client prints
	// it in both places) or, in older texts, "host:port".
	logServer = regexp.MustCompile(`server=([^,\s]+(?:,[0-9]+,[0-9]+)?)|servers with issues: ([^,\s]+(?:,[0-9]+,[0-9]+)?)|Call queue is full on ([^,\s]+(?:,[0-9]+,[0-9]+)?)`)
	encodedIn = regexp.MustCompile(`([0-9a-f]{32})`)
)

// maxLineText keeps evidence readable; stack traces can be enormous.
const maxLineText = 300

// ParseClientLog scans a log file for the exception texts the doctor knows.
// Lines without one are skipped, lines of any length are handled, and only
// a read error fails.
func ParseClientLog(r io.Reader) ([]LogEvent, error) {
	var out []LogEvent
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if ev, ok := matchLogLine(line); ok {
			ev.Line = n
			out = append(out, ev)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("read log: %w", err)
		}
	}
}

func matchLogLine(line string) (LogEvent, bool) {
	for _, sig := range logSignatures {
		if !sig.re.MatchString(line) {
			continue
		}
		ev := LogEvent{Rule: sig.rule, Text: cut(strings.TrimSpace(line), maxLineText)}
		if m := logRegion.FindStringSubmatch(line); m != nil {
			name := m[1] + m[2] + m[3]
			if e := encodedIn.FindString(name); e != "" {
				name = e
			}
			ev.Region = name
		}
		if m := logServer.FindStringSubmatch(line); m != nil {
			ev.Server = m[1] + m[2] + m[3]
		}
		return ev, true
	}
	return LogEvent{}, false
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Back up to a rune start so the cut text stays valid UTF-8.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}
