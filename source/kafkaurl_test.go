package source

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseKafkaURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want KafkaURL
	}{
		{"kafka://127.0.0.1:9092/orders?group=g1", KafkaURL{Brokers: []string{"127.0.0.1:9092"}, Topic: "orders", Group: "g1", Start: "earliest"}},
		{"kafka://a,b:9093/t.x_y-1?start=latest&partitions=8", KafkaURL{Brokers: []string{"a:9092", "b:9093"}, Topic: "t.x_y-1", Start: "latest", Partitions: 8}},
		{"kafka://h/t?session_timeout=6s&group=g", KafkaURL{Brokers: []string{"h:9092"}, Topic: "t", Group: "g", Start: "earliest", SessionTimeout: 6 * time.Second}},
		{"kafka://[::1]:9092/t", KafkaURL{Brokers: []string{"[::1]:9092"}, Topic: "t", Start: "earliest"}},
		{"kafka://h/t?group=g&instance=sink-1", KafkaURL{Brokers: []string{"h:9092"}, Topic: "t", Group: "g", Start: "earliest", Instance: "sink-1"}},
		{"kafka://[::1]/t?group=a%20b", KafkaURL{Brokers: []string{"[::1]:9092"}, Topic: "t", Group: "a b", Start: "earliest"}},
	} {
		got, err := ParseKafkaURL(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, why string }{
		{"kafka://h:9092", "no topic"},
		{"kafka://h:9092/", "no topic"},
		{"http://h/t", "want kafka://"},
		{"kafka://h:0/t", "bad port"},
		{"kafka://h:99999/t", "bad port"},
		{"kafka://h:09092/t", "bad port"},
		{"kafka://,h/t", "empty broker"},
		{"kafka://::1/t", "brackets"},
		{"kafka://h/a/b", "topic"},
		{"kafka://h/" + strings.Repeat("x", 250), "topic"},
		{"kafka://h/..", "topic"},
		{"kafka://h/t?group=", "group"},
		{"kafka://h/t?group=a&group=b", "given 2 times"},
		{"kafka://h/t?start=middle", "start"},
		{"kafka://h/t?instance=", "instance"},
		{"kafka://h/t?instance=a%20b", "instance"},
		{"kafka://h/t?partitions=0", "partitions"},
		{"kafka://h/t?colour=red", "unknown parameter"},
		{"kafka://u@h/t", "bad host"},
		{"kafka://h/t?session_timeout=10", "session_timeout"},
		{"kafka://h/t?session_timeout=1.5us", "session_timeout"},
	} {
		if _, err := ParseKafkaURL(c.in); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: error %v, want one saying %q", c.in, err, c.why)
		}
	}
}

// What String prints parses back to the same URL, and printing that again
// changes nothing.
func FuzzParseKafkaURL(f *testing.F) {
	for _, s := range []string{"kafka://127.0.0.1:9092/orders?group=g1", "kafka://a,b:1/t?start=latest&partitions=3",
		"kafka://[::1]/t", "kafka://h/t?group=%00", "kafka://h:9092/t?group=x&x=y", "kafka://h/t?session_timeout=1m30s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseKafkaURL(s)
		if err != nil {
			return
		}
		if len(u.Brokers) == 0 || u.Topic == "" {
			t.Fatalf("%q parsed to %+v", s, u)
		}
		again, err := ParseKafkaURL(u.String())
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", s, u.String(), err)
		}
		if !reflect.DeepEqual(again, u) || again.String() != u.String() {
			t.Fatalf("%q: round trip %+v -> %q -> %+v", s, u, u.String(), again)
		}
	})
}
