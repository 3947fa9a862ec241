package hotspot

import (
	"testing"

	"github.com/denorm/denorm/schema"
)

// A fanout table's load is its entity's own rate (writes_by_entity) times
// the typical list length, and its keys draw the list's fields.
func TestFanoutTableLoad(t *testing.T) {
	src := `name: fan
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
    rowkey: ["hash(followers.followerId, 1)", followers.followerId, "reverse(postedAt)", postId]
    presplit: 8
    columns: {d:a: authorId}
workload:
  writes_per_second: 1000
  writes_by_entity: {post: 100/s}
`
	p, err := schema.Parse("fan.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	res := simulate(t, p, Options{Table: "home", Seed: 1})
	if res.WritesPerSecond != 100*200 {
		t.Errorf("fanout load %v writes/s, want 100 posts/s x 200 followers", res.WritesPerSecond)
	}
	if len(res.Regions) < 8 {
		t.Errorf("%d regions, want the 8 pre-split over the hash", len(res.Regions))
	}
}
