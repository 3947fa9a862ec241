package doctor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// longLine streams size bytes of one line without holding them.
type longLine struct{ left int64 }

func (l *longLine) Read(p []byte) (int, error) {
	if l.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	n = min(n, l.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	l.left -= n
	return int(n), nil
}

// A line far over the limit is counted and skipped, the lines after it
// are still read, and memory stays at the limit rather than the line.
func TestScanClientLogSkipsLongLines(t *testing.T) {
	const size = 300 << 20
	in := io.MultiReader(
		strings.NewReader("2026-11-30 05:00:01,001 INFO first\n"),
		&longLine{left: size}, strings.NewReader(" RowTooBigException at the end of the long line\n"),
		strings.NewReader("2026-11-30 05:00:02,002 WARN x: org.apache.hadoop.hbase.CallQueueTooBigException: Call queue is full on rs1:16020\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sc, err := ScanClientLog(in)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if sc.LongLines != 1 || sc.FirstLong != 2 || sc.Lines != 3 {
		t.Errorf("lines %d, long %d (first %d); want 3, 1, 2", sc.Lines, sc.LongLines, sc.FirstLong)
	}
	if len(sc.Events) != 1 || sc.Events[0].Rule != "call-queue-full" || sc.Events[0].Line != 3 {
		t.Errorf("events %+v: want the call queue line 3 only", sc.Events)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 3*MaxLogLine {
		t.Errorf("reading a %d MiB line allocated %d MiB", size>>20, grew>>20)
	}
}

// writeBenchLog writes about mb MiB of log: ordinary lines with one
// exception line in a hundred, as a busy client's log has.
func writeBenchLog(tb testing.TB, mb int) string {
	tb.Helper()
	ex, err := os.ReadFile("testdata/client.log")
	if err != nil {
		tb.Fatal(err)
	}
	exLines := strings.Split(strings.TrimSpace(string(ex)), "\n")
	p := filepath.Join(tb.TempDir(), "bench.log")
	var b bytes.Buffer
	for i := 0; b.Len() < mb<<20; i++ {
		if i%100 == 0 {
			b.WriteString(exLines[i/100%len(exLines)])
		} else {
			fmt.Fprintf(&b, "2026-11-30 05:%02d:%02d,%03d INFO  [worker-%d] app.Handler: served request %d for customer c%d in %d ms", i/60000%60, i/1000%60, i%1000, i%16, i, i%5000, i%37)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkScanClientLog reads one log file with ScanClientLog, with
// `wc -l` and with the line-by-line matcher in the same run, and reports
// the speeds and the ratio of ScanClientLog's time to wc's (see
// docs/BENCHMARKS.md).
func BenchmarkScanClientLog(b *testing.B) {
	p := writeBenchLog(b, 256)
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	mb := float64(fi.Size()) / (1 << 20)
	var wc time.Duration
	if _, err := exec.LookPath("wc"); err == nil {
		start := time.Now()
		if out, err := exec.Command("wc", "-l", p).CombinedOutput(); err != nil {
			b.Fatalf("wc -l: %v %s", err, out)
		}
		wc = time.Since(start)
	}
	b.SetBytes(fi.Size())
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ScanClientLog(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	per := time.Since(start) / time.Duration(b.N)
	b.StopTimer()
	// The line-by-line way (every expression on every line), once.
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	naiveClientLog(data)
	b.ReportMetric(mb/time.Since(t0).Seconds(), "line-by-line-MB/s")
	if wc > 0 {
		b.ReportMetric(mb/wc.Seconds(), "wc-MB/s")
		b.ReportMetric(per.Seconds()/wc.Seconds(), "x-wc-time")
	}
}
