package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/source"
)

// docCommands lists the denorm commands of a Markdown file's sh blocks
// that name an HBase or Kafka address, continuation lines joined, without
// the prompt and the bin/ path.
func docCommands(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		joined := strings.ReplaceAll(block[1], "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
			if !strings.HasPrefix(line, "bin/denorm ") || !strings.Contains(line, "hbase://") && !strings.Contains(line, "kafka://") {
				continue
			}
			out = append(out, strings.TrimPrefix(line, "bin/denorm "))
		}
	}
	return out
}

// shellWords splits a command line as the shell would for these commands:
// words separated by spaces, single quotes taken off.
func shellWords(line string) []string {
	var words []string
	for _, m := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(line, -1) {
		words = append(words, strings.Trim(m, "'"))
	}
	return words
}

// The HBase and Kafka commands of the README and docs/kafka.md run as
// written against the test environment: the addresses become the test
// environment's, the topic and group names this test's own, the metrics
// port any free one, and the embedded store a temporary folder. The sink
// applies what gen produced and stops cleanly; reconcile then finds every
// copy correct.
func TestDocCommands(t *testing.T) {
	hbaseURL, kafkaURL := hbaseURL(t), testenv.KafkaURL(t)
	hb, err := url.Parse(hbaseURL)
	if err != nil {
		t.Fatal(err)
	}
	ku, err := url.Parse(kafkaURL)
	if err != nil {
		t.Fatal(err)
	}
	kafka := ku.Host
	topic := testenv.KafkaTopic(t, "doc")
	group := topic + "_group"
	store := "pebble://" + filepath.ToSlash(filepath.Join(t.TempDir(), "data"))
	rewrite := strings.NewReplacer(
		"hbase://127.0.0.1:9090", "hbase://"+hb.Host,
		"kafka://127.0.0.1:9092/orders?", "kafka://"+kafka+"/"+topic+"?",
		"group=denorm", "group="+group,
		"127.0.0.1:9464", "127.0.0.1:0",
	)
	cmds := docCommands(t, filepath.Join("..", "..", "README.md"))
	cmds = append(cmds, docCommands(t, filepath.Join("..", "..", "docs", "kafka.md"))...)
	if len(cmds) < 3 {
		t.Fatalf("found %d HBase and Kafka commands in the docs: %q", len(cmds), cmds)
	}
	t.Chdir(filepath.Join("..", ".."))
	t.Setenv(storeEnv, store)
	ctx := t.Context()
	ran := map[string]bool{}
	for _, line := range cmds {
		args := shellWords(rewrite.Replace(line))
		if ran[strings.Join(args, " ")] {
			continue // the same command in two documents
		}
		ran[strings.Join(args, " ")] = true
		if args[0] != "sink" {
			var out, errb bytes.Buffer
			if code := run(ctx, args, &out, &errb); code != 0 {
				t.Fatalf("denorm %s (from %q): exit %d\n%s%s", strings.Join(args, " "), line, code, out.String(), errb.String())
			}
			continue
		}
		// The sink runs until stopped: stop it once its group has
		// committed everything on the topic.
		u, err := source.ParseKafkaURL(args[slicesIndex(args, "--from")+1])
		if err != nil {
			t.Fatal(err)
		}
		sinkCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var code int
		var out, errb bytes.Buffer
		wg.Add(1)
		go func() {
			defer wg.Done()
			code = run(sinkCtx, args, &out, &errb)
		}()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			lag, err := source.KafkaGroupLag(ctx, u)
			if err == nil && lag == 0 {
				break
			}
			if time.Now().After(deadline) {
				stop()
				wg.Wait()
				t.Fatalf("denorm %s: lag %d (%v) after 2 minutes\n%s", strings.Join(args, " "), lag, err, errb.String())
			}
			time.Sleep(500 * time.Millisecond)
		}
		stop()
		wg.Wait()
		if code != 0 {
			t.Fatalf("denorm %s: exit %d after a stop\n%s", strings.Join(args, " "), code, errb.String())
		}
		var rec bytes.Buffer
		if c := run(ctx, []string{"reconcile", "--schema", "examples/orders.yaml", "--dry-run"}, &rec, &rec); c != 0 {
			t.Fatalf("after the sink: reconcile --dry-run exit %d\n%s", c, rec.String())
		}
		if !strings.Contains(rec.String(), "primary rows scanned") {
			t.Errorf("reconcile report: %s", rec.String())
		}
	}
	if len(ran) < 3 {
		t.Errorf("ran %d distinct commands", len(ran))
	}
}

func slicesIndex(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}
