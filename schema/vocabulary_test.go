package schema

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/rowkey"
)

const vocabBase = `name: v
entities:
  reading:
    key: [deviceId, ts]
    version: ts
    version_kind: epoch_ms
    fields: {deviceId: string, ts: timestamp, alert: bool, region: string, seq: int64}
tables:
  readings:
    role: primary
    entity: reading
    rowkey: [hash(region, deviceId, 2), deviceId, "text(ts, #)"]
    families: {d: {}}
    columns: {d:a: alert, d:r: region, d:s: seq}
`

func mustLoad(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := Parse("v.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return p
}

// loadErrors returns the load's errors; the test fails when it loads.
func loadErrors(t *testing.T, src string) Errors {
	t.Helper()
	_, err := Parse("v.yaml", []byte(src))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want load errors, got %v", err)
	}
	return errs
}

func TestQueryVocabulary(t *testing.T) {
	p := mustLoad(t, vocabBase+`queries:
  alerts_today:
    table: readings
    where: {alert: true}
    range: {field: ts, calendar: today}
    direction: reverse
    limit: 100
  nov:
    table: readings
    by: [deviceId, region]
    range: {field: ts, from: 2025-11-01, to: "2025-12-01T00:00:00Z"}
  batch:
    table: readings
    by: [deviceId, region, ts]
    multi_get: 50
`)
	q := p.Query("alerts_today")
	if len(q.Where) != 1 || q.Where[0].Field != "alert" || q.Where[0].Value != "true" || q.Where[0].Line == 0 {
		t.Errorf("where %+v", q.Where)
	}
	if q.Range.Calendar != CalendarToday || q.Range.Window() != 24*time.Hour || q.Direction != DirectionReverse {
		t.Errorf("range %+v direction %q", q.Range, q.Direction)
	}
	if !contains(q.Bound.Unused, "alert") {
		t.Errorf("a where on a field the key does not order is a filter: %+v", q.Bound)
	}
	if w := p.Query("nov").Range.Window(); w != 30*24*time.Hour {
		t.Errorf("from/to window %v", w)
	}
	if !p.Query("nov").Range.OnKey {
		t.Errorf("ts follows the fixed hash and deviceId: the range is on the key")
	}
	if b := p.Query("batch"); b.MultiGet != 50 || b.Shape != ShapeGet {
		t.Errorf("multi_get %d shape %s", b.MultiGet, b.Shape)
	}
	for bad, want := range map[string]string{
		"where: {alert: maybe}":                                "is not a bool",
		"where: {nosuch: 1}":                                   "not a field",
		"range: {field: ts, last: 1h, calendar: today}":        "one of last, calendar",
		"range: {field: ts, calendar: fortnight}":              "fortnight",
		"range: {field: ts, from: 2025-12-01, to: 2025-11-01}": "not after from",
		"range: {field: ts, from: yesterday}":                  "is not a time",
		"direction: sideways":                                  "sideways",
		"multi_get: 0":                                         "multi_get",
		"profile: nosuch":                                      "profile",
		"wher: {alert: true}":                                  "unknown key \"wher\"",
	} {
		errs := loadErrors(t, vocabBase+"queries:\n  q:\n    table: readings\n    "+bad+"\n")
		if !strings.Contains(errs.Error(), want) || errs[0].Line == 0 {
			t.Errorf("%s: want an error with a line mentioning %q, got %v", bad, want, errs)
		}
	}
}

func TestKeyFormatsInSchema(t *testing.T) {
	p := mustLoad(t, vocabBase)
	k := p.Table("readings").Key
	if k.Part(0).Func != rowkey.Hash || len(k.Part(0).More()) != 1 || k.Part(2).Func != rowkey.Text || k.Part(2).Delim != "#" {
		t.Fatalf("parts %+v", k.Parts())
	}
	key, err := k.Encode(rowkey.Values{"region": "eu", "deviceId": "d1", "ts": int64(1764547200000)})
	if err != nil || !strings.HasSuffix(string(key), "1764547200000#") {
		t.Fatalf("key %q %v", key, err)
	}
	errs := loadErrors(t, strings.Replace(vocabBase, "hash(region, deviceId, 2)", "hash(region, nosuch, 2)", 1))
	if !strings.Contains(errs.Error(), "nosuch") || errs[0].Line != 12 {
		t.Errorf("want an error at line 12 naming the unknown hashed field: %v", errs)
	}
}

const fanoutBase = `name: f
entities:
  user:
    key: userId
    fields: {userId: string}
    children:
      followers: {key: followerId, max: 5000, typical: 200, fields: {followerId: string}}
  post:
    key: postId
    fields: {postId: string, authorId: string, postedAt: timestamp}
    references:
      author: {entity: user, key: authorId}
tables:
  users: {role: primary, entity: user, rowkey: [userId], columns: {"f:{followerId}": followers}}
  posts: {role: primary, entity: post, rowkey: [postId], columns: {d:a: authorId, d:t: postedAt}}
  home:
    role: fanout
    entity: post
    fanout: {reference: author, list: followers}
    rowkey: [followers.followerId, "reverse(postedAt)", postId]
    columns: {d:a: authorId}
queries:
  timeline: {table: home, by: [followers.followerId], limit: 20}
`

func TestFanoutTables(t *testing.T) {
	p := mustLoad(t, fanoutBase)
	home := p.Table("home")
	if home.Fanout == nil || home.Fanout.Entity != "user" || home.Fanout.Typical != 200 || home.Fanout.Max != 5000 {
		t.Fatalf("fanout %+v", home.Fanout)
	}
	if got := p.RowsPerEvent(home); got != 200 {
		t.Errorf("rows per post: %v, want 200", got)
	}
	if q := p.Query("timeline"); q.Shape != ShapePrefix {
		t.Errorf("timeline by follower: shape %s", q.Shape)
	}
	for _, c := range []struct{ from, to, want string }{
		{"reference: author,", "reference: editor,", `no reference "editor"`},
		{"list: followers}", "list: fans}", `no child list "fans"`},
		{"rowkey: [followers.followerId,", "rowkey: [authorId,", "needs a field of list"},
		{"    fanout: {reference: author, list: followers}\n", "", "says where its copies go"},
		{"role: fanout", "role: index", `"fanout" belongs to fanout tables`},
	} {
		errs := loadErrors(t, strings.Replace(fanoutBase, c.from, c.to, 1))
		if !strings.Contains(errs.Error(), c.want) || errs[0].Line == 0 {
			t.Errorf("%q -> %q: want an error with a line mentioning %q, got %v", c.from, c.to, c.want, errs)
		}
	}
}
