package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
)

// A sink with an instance id is a static member of its group: killed and
// restarted with the same id it gets its partitions back at once, where a
// dynamic member waits for the dead one's session to time out. The session
// timeout here is 30 s and the restarted sink must be assigned within 15 s:
// the margin is wide both ways (a static rejoin takes about a second), so
// the check does not depend on the machine's speed. Then it must end equal
// to the model like any sink.
func TestSinkStaticMemberRejoinsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	u, err := source.ParseKafkaURL(fmt.Sprintf("%s/%s?group=%s&partitions=2&session_timeout=30s&instance=sink-a",
		testenv.KafkaURL(t), testenv.KafkaTopic(t, "denorm-sink-static"), testenv.KafkaTopic(t, "g")))
	if err != nil {
		t.Fatal(err)
	}
	events := genEvents(t, gen.OrdersOptions{Events: 400, Seed: 21})
	produce(t, u, events)
	model := modelStore(t, events)
	db := "pebble://" + filepath.Join(t.TempDir(), "sink")
	args := []string{"--schema", ordersSchema, "--from", u.String(), "--store", db, "--batch", "50",
		"--dead-letter", filepath.Join(t.TempDir(), "dead.jsonl")}

	p := startSink(t, args...)
	p.logged("partitions assigned")
	p.kill()
	start := time.Now()
	p = startSink(t, args...)
	p.logged("partitions assigned")
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the restarted static member was assigned after %s; a 30 s session timeout says it was treated as a new member", took)
	} else {
		t.Logf("restarted static member assigned after %s", took.Round(time.Millisecond))
	}
	waitCommitted(t, u, p)
	p.stop()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sameTables(t, model, st)
}
