// Package hotspot estimates how a table's load falls on its regions over
// time, for a schema's row key design and declared workload, without a
// cluster.
//
// The simulation samples writes (and the reads of the table's queries) at
// each time step rather than generating every one: a few thousand synthetic
// entities per step, with field values drawn from the workload's declared
// distributions and timestamps that follow simulated time. Each sample is
// encoded into a real row key with package rowkey and routed to the region
// whose range holds it, and stands for its share of the step's requests.
//
// Regions start as the schema's pre-split (the split keys package ddl
// computes) or as one region, and split at their middle key when their size
// passes a threshold, as HBase's constant-size split policy does. The
// middle key comes from a bounded uniform sample of the keys each region
// has received, so a split lands where half the region's data lies.
//
// Results are deterministic for a given seed.
package hotspot
