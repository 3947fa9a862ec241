package source

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// KafkaURL is a Kafka topic named by URL:
//
//	kafka://host:port[,host:port...]/topic?group=G&start=earliest&partitions=N&session_timeout=D&instance=I
//
// The hosts are seed brokers (port 9092 when left out). group is the
// consumer group a sink joins; start says where a group without committed
// offsets begins (earliest, the default, or latest); partitions is the
// partition count used when denorm creates the topic (0: the broker's
// default); session_timeout is how long the group waits for a silent
// member before giving its partitions to others (0: the client's default,
// 45s), a Go duration within the broker's bounds (6s to 30m by default).
type KafkaURL struct {
	Brokers        []string
	Topic          string
	Group          string
	Start          string
	Partitions     int
	SessionTimeout time.Duration
	// Instance, when set, makes the sink a static member of its group: a
	// process restarted with the same instance id takes its partitions
	// back at once instead of after a rebalance, and the group does not
	// rebalance while it is away (up to the session timeout). Each
	// process of a group needs its own.
	Instance string
}

// KafkaScheme is the scheme of Kafka URLs.
const KafkaScheme = "kafka"

// IsKafkaURL tells a Kafka URL from a file path.
func IsKafkaURL(s string) bool { return strings.HasPrefix(s, KafkaScheme+"://") }

// ParseKafkaURL reads a Kafka URL. It is strict, since a typo in a group or
// topic name would otherwise start a consumer from scratch somewhere else.
func ParseKafkaURL(raw string) (KafkaURL, error) {
	var u KafkaURL
	bad := func(format string, a ...any) (KafkaURL, error) {
		return KafkaURL{}, fmt.Errorf("kafka URL %q: %s", raw, fmt.Sprintf(format, a...))
	}
	rest, ok := strings.CutPrefix(raw, KafkaScheme+"://")
	if !ok {
		return bad("want kafka://host:port/topic")
	}
	// Parsed by hand: net/url refuses a comma-separated host list.
	rest, query, _ := strings.Cut(rest, "?")
	hosts, topic, ok := strings.Cut(rest, "/")
	if !ok || topic == "" {
		return bad("no topic (want kafka://host:port/topic)")
	}
	for h := range strings.SplitSeq(hosts, ",") {
		b, err := parseBroker(h)
		if err != nil {
			return bad("%v", err)
		}
		u.Brokers = append(u.Brokers, b)
	}
	if err := checkTopic(topic); err != nil {
		return bad("%v", err)
	}
	u.Topic = topic
	u.Start = "earliest"
	q, err := url.ParseQuery(query)
	if err != nil {
		return bad("bad query: %v", err)
	}
	for name, vs := range q {
		if len(vs) != 1 {
			return bad("%s given %d times", name, len(vs))
		}
		v := vs[0]
		switch name {
		case "group":
			if v == "" || len(v) > 255 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return bad("group %q: want 1 to 255 printable characters", v)
			}
			u.Group = v
		case "start":
			if v != "earliest" && v != "latest" {
				return bad("start %q: want earliest or latest", v)
			}
			u.Start = v
		case "partitions":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return bad("partitions %q: want an integer from 1 to 10000", v)
			}
			u.Partitions = n
		case "instance":
			if v == "" || len(v) > 249 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
				return bad("instance %q: want 1 to 249 printable characters, no spaces", v)
			}
			u.Instance = v
		case "session_timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Second || d > time.Hour || d%time.Millisecond != 0 {
				return bad("session_timeout %q: want a duration from 1s to 1h in whole milliseconds, like 10s", v)
			}
			u.SessionTimeout = d
		default:
			return bad("unknown parameter %q (want group, start, partitions, session_timeout, instance)", name)
		}
	}
	return u, nil
}

// String is the URL again, in a canonical form.
func (u KafkaURL) String() string {
	q := url.Values{}
	if u.Group != "" {
		q.Set("group", u.Group)
	}
	if u.Start != "" && u.Start != "earliest" {
		q.Set("start", u.Start)
	}
	if u.Partitions > 0 {
		q.Set("partitions", strconv.Itoa(u.Partitions))
	}
	if u.SessionTimeout > 0 {
		q.Set("session_timeout", u.SessionTimeout.String())
	}
	if u.Instance != "" {
		q.Set("instance", u.Instance)
	}
	s := KafkaScheme + "://" + strings.Join(u.Brokers, ",") + "/" + u.Topic
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

func parseBroker(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("empty broker address")
	}
	host, port := h, "9092"
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		host, port = h[:i], h[i+1:]
	}
	if host == "" || strings.ContainsAny(host, "/@?#% ") || strings.ContainsFunc(host, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return "", fmt.Errorf("broker %q: bad host", h)
	}
	if bracketed := strings.HasPrefix(host, "["); bracketed != strings.HasSuffix(host, "]") ||
		(!bracketed && strings.Contains(host, ":")) {
		return "", fmt.Errorf("broker %q: write an IPv6 host in brackets, [::1]:9092", h)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return "", fmt.Errorf("broker %q: bad port %q", h, port)
	}
	return host + ":" + port, nil
}

// checkTopic applies Kafka's own rule for topic names.
func checkTopic(t string) error {
	if t == "." || t == ".." || len(t) > 249 {
		return fmt.Errorf("topic %q: not a legal Kafka topic name", t)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic %q: Kafka topic names hold only letters, digits, '.', '_' and '-'", t)
		}
	}
	return nil
}
