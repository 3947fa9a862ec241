package write

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store/pebble"
)

// BenchmarkDeriveBesidePebble derives the generated stream's states into a
// ring of Scratches as large as the writer keeps for two batches in flight,
// alone and then while another goroutine commits the writer's recorded
// cells into raw Pebble without pause, as the write of one batch runs
// beside the staging of the next. The difference is what the memory system
// shared with Pebble costs derive, which the derive's own profile cannot
// show; "alone" is the baseline measured in the same run.
func BenchmarkDeriveBesidePebble(b *testing.B) {
	ls := benchLines(b)
	plan := ordersPlan(b)
	log := recordStream(b, ls, 1000)
	evs := ls.batch(b, plan, 0, ls.events())
	for _, beside := range []bool{false, true} {
		name := "alone"
		if beside {
			name = "beside-raw-pebble"
		}
		b.Run(name, func(b *testing.B) {
			var stop atomic.Bool
			var wg sync.WaitGroup
			if beside {
				db, err := pdb.Open(filepath.Join(b.TempDir(), "raw"), &pdb.Options{MemTableSize: pebble.DefaultMemTableSize, Logger: quietPebble{pdb.DefaultLogger}})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						from := 0
						for _, to := range log.batches {
							if stop.Load() {
								return
							}
							if err := log.commitWith(db, from, to, pdb.NoSync); err != nil {
								b.Error(err)
								return
							}
							from = to
						}
					}
				}()
			}
			scs := make([]layout.Scratch, 2000)
			for i := 0; b.Loop(); i++ {
				ev := evs[i%len(evs)]
				if _, err := scs[i%len(scs)].Derive(plan, plan.Entity(ev.Entity), ev.State); err != nil {
					b.Fatal(err)
				}
			}
			stop.Store(true)
			wg.Wait()
		})
	}
}
