package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
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
	// lits are pieces of literal text of which every match holds one:
	// testing them first saves running the expression on most lines.
	lits []string
}

var logSignatures = []logSignature{
	{"row-unbounded", regexp.MustCompile(`RowTooBigException|Max row size allowed`), []string{"RowTooBig", "Max row size"}},
	{"cell-huge", regexp.MustCompile(`KeyValue size too large|exceeds limit of [0-9]+ bytes`), []string{"KeyValue size", "xceeds limit of"}},
	{"scanner-lease-expired", regexp.MustCompile(`UnknownScannerException|Unknown scanner '|ScannerTimeoutException|ms passed since the last invocation|LeaseException|lease '[^']*' does not exist`),
		[]string{"UnknownScanner", "Unknown scanner", "ScannerTimeout", "passed since", "LeaseException", "' does not exist"}},
	{"memstore-blocking", regexp.MustCompile(`RegionTooBusyException|Over memstore limit|Blocking updates for`), []string{"RegionTooBusy", "Over memstore", "Blocking updates"}},
	{"call-queue-full", regexp.MustCompile(`CallQueueTooBigException|Call queue is full`), []string{"CallQueueTooBig", "Call queue is full"}},
	{"store-files-blocking", regexp.MustCompile(`too many store files`), []string{"y store files"}},
	{"retries-exhausted", regexp.MustCompile(`RetriesExhaustedWithDetailsException|RetriesExhaustedException|Failed [0-9]+ actions?:`), []string{"RetriesExhausted", "Failed "}},
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

// MaxLogLine bounds one log line. Longer lines (a dumped payload, a binary
// file read as a log) are counted and skipped, so that memory does not grow
// with a line's length.
const MaxLogLine = 4 << 20

// logLiterals is every signature's literals, each starting with a byte
// that is rare in log text: the block search (see ScanClientLog) runs a
// byte search for a literal's first byte, and a frequent one ('e', 't')
// would stop it every few bytes. A line holding none of them cannot match,
// and most lines of a log hold none.
var logLiterals = [][]byte{
	[]byte("xception"), []byte("Max row size"), []byte("KeyValue size"), []byte("xceeds limit of"),
	[]byte("Unknown scanner"), []byte("passed since"), []byte("' does not exist"), []byte("Over memstore"),
	[]byte("Blocking updates"), []byte("Call queue is full"), []byte("y store files"), []byte("Failed "),
}

// LogScan is what ScanClientLog read.
type LogScan struct {
	Events []LogEvent
	Lines  int // lines read, the long ones included
	// LongLines counts the lines over MaxLogLine, skipped; FirstLong is
	// the first one's number (0 when none).
	LongLines int
	FirstLong int
}

// ParseClientLog scans a log file for the exception texts the doctor knows.
// Lines without one are skipped, lines over MaxLogLine are skipped (see
// ScanClientLog to count them), and only a read error fails.
func ParseClientLog(r io.Reader) ([]LogEvent, error) {
	sc, err := ScanClientLog(r)
	return sc.Events, err
}

// ScanClientLog is ParseClientLog, with counts of the lines read and
// skipped. It streams: memory is one buffer of MaxLogLine bytes plus the
// events found. It reads the file in blocks of whole lines and searches
// each block for the literals (a few passes of a fast byte search over the
// block, instead of a dozen calls per line); only the lines holding one
// are matched against the expressions.
func ScanClientLog(r io.Reader) (LogScan, error) {
	var out LogScan
	buf := make([]byte, MaxLogLine)
	filled := 0       // bytes of buf holding unread input
	line := 1         // number of the line that starts buf
	skipping := false // inside a line over the limit, dropping it to its end
	var hits []int
	for eof := false; !eof; {
		n, err := io.ReadFull(r, buf[filled:])
		filled += n
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			return out, fmt.Errorf("read log at line %d: %w", line, err)
		}
		block := buf[:filled]
		if skipping {
			i := bytes.IndexByte(block, '\n')
			if i < 0 {
				filled = 0
				continue
			}
			skipping = false
			block = block[i+1:]
			line++
		}
		end := bytes.LastIndexByte(block, '\n') + 1 // whole lines only
		if eof {
			end = len(block) // a last line without a newline
		}
		if end == 0 && len(block) == len(buf) {
			// One line fills the buffer: over the limit.
			out.LongLines++
			if out.FirstLong == 0 {
				out.FirstLong = line
			}
			skipping, filled = true, 0
			continue
		}
		whole := block[:end]
		hits = candidateLines(whole, hits[:0])
		at, atLine := 0, line
		for _, start := range hits {
			atLine += bytes.Count(whole[at:start], []byte{'\n'})
			at = start
			stop := bytes.IndexByte(whole[start:], '\n')
			if stop < 0 {
				stop = len(whole) - start
			}
			if ev, ok := matchLogLine(string(whole[start : start+stop])); ok {
				ev.Line = atLine
				out.Events = append(out.Events, ev)
			}
		}
		nl := bytes.Count(whole, []byte{'\n'})
		line += nl
		if eof && end > 0 && whole[end-1] != '\n' {
			line++ // the unterminated last line
		}
		rest := copy(buf, block[end:])
		filled = rest
	}
	if skipping {
		line++ // a long last line without a newline
	}
	out.Lines = line - 1
	return out, nil
}

// candidateLines appends to hits the start of every line of block that
// holds one of the literals, in order and once each.
func candidateLines(block []byte, hits []int) []int {
	for _, lit := range logLiterals {
		for off := 0; ; {
			i := bytes.Index(block[off:], lit)
			if i < 0 {
				break
			}
			p := off + i
			start := bytes.LastIndexByte(block[:p], '\n') + 1
			hits = append(hits, start)
			// The rest of this line is a candidate already.
			e := bytes.IndexByte(block[p:], '\n')
			if e < 0 {
				break
			}
			off = p + e + 1
		}
	}
	slices.Sort(hits)
	return slices.Compact(hits)
}

func matchLogLine(line string) (LogEvent, bool) {
	for _, sig := range logSignatures {
		if containsAny(line, sig.lits) && sig.re.MatchString(line) {
			return matchLogLineWith(line, sig)
		}
	}
	return LogEvent{}, false
}

// matchLogLineWith makes the event of a line that sig matches.
func matchLogLineWith(line string, sig logSignature) (LogEvent, bool) {
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

func containsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
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
