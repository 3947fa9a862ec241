package live

import (
	"context"
	"fmt"
	"testing"

	"github.com/denorm/denorm/store/pebble"
)

// BenchmarkInspect samples 500 keys of a time-led table of 4,000 and of
// 40,000 rows: the bytes allocated per inspection must not follow the
// table's size.
//
//	go test ./review/live -run '^$' -bench Inspect -benchtime 20x
func BenchmarkInspect(b *testing.B) {
	for _, rows := range []int{4_000, 40_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			ctx := context.Background()
			st, err := pebble.Open(ctx, b.TempDir(), pebble.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			d := designs()[0]
			d.n = rows
			d.fill(ctx, b, st, "big")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				obs, err := Inspect(ctx, st, "big", Options{Sample: 500})
				if err != nil {
					b.Fatal(err)
				}
				if len(obs.Keys) != 500 {
					b.Fatalf("%d keys", len(obs.Keys))
				}
			}
		})
	}
}
