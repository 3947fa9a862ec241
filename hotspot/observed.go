package hotspot

import "github.com/denorm/denorm/store"

// FromStore turns a live store's region list (store.Store.Regions) into a
// one-step Result of cumulative request counts, so it can be summarised
// and drawn as a simulation is.
func FromStore(schemaName, table string, key []string, regions []store.Region) *Result {
	res := &Result{
		Schema: schemaName, Table: table, Key: key,
		Source: SourceStore, Unit: "requests", Layout: "as the store reports it",
		Steps: make([]Step, 1), Notes: []string{},
	}
	for i, r := range regions {
		res.Regions = append(res.Regions, &Region{
			ID: i, Start: r.Start, End: r.End, Parent: -1,
			StartKey: store.Printable(r.Start), EndKey: store.Printable(r.End),
			Died:   -1,
			Writes: []float64{float64(r.WriteRequests)},
			Reads:  []float64{float64(r.ReadRequests)},
			Bytes:  []float64{0},
		})
	}
	summarize(res)
	return res
}
