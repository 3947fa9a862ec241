package review

import (
	"fmt"
	"math"
	"strings"

	"github.com/denorm/denorm/cost"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Operational thresholds.
const (
	// A table taking this many writes per second should not start life as
	// one region.
	presplitRate = 1000.0
	// Below and above these, regions are too small or too big to manage.
	tinyRegion  = 1 << 30
	giantRegion = 50 << 30
	// Pre-split regions that would hold less than this at full size are
	// needless.
	tinyPresplitRegion = 64 << 20
)

func opsLine(p *schema.Plan, key string) int {
	return firstLine(p.Ops.Lines[key], p.Ops.Line)
}

func clientLine(p *schema.Plan, key string) int {
	return firstLine(p.Client.Lines[key], p.Client.Line)
}

// checkClient covers connection-per-request, puts-unbatched and
// client-no-timeouts from the client section and each of its profiles.
func checkClient(r *reviewer) {
	base := r.plan.Client
	r.checkClientSettings(base, "client", func(key string) int { return clientLine(r.plan, key) })
	for _, prof := range base.Profiles {
		eff := base.Effective(prof.Name)
		r.checkClientSettings(eff, "client.profiles."+prof.Name, func(key string) int {
			return firstLine(prof.Lines[key], prof.Line)
		})
	}
	r.checkProfileBudgets()
}

func (r *reviewer) checkClientSettings(c *schema.Client, name string, line func(key string) int) {
	if c.Connection == schema.ConnectionPerRequest {
		r.add("connection-per-request", at{line: line("connection")},
			name+".connection is per_request: every request pays for a new connection, registry session and region lookups")
	}
	writes := r.plan.Workload.WritesPerSecond
	switch {
	case c.Batching == schema.BatchingSingle:
		r.add("puts-unbatched", at{line: line("batching")}, fmt.Sprintf(
			"%s.batching is single: each put is a round trip%s", name, rateNote(writes)))
	case c.Name == "" && c.Batching == "" && c.WriteBuffer == 0 && writes >= presplitRate:
		r.add("puts-unbatched", at{line: line("")}, fmt.Sprintf(
			"the client declares neither batching nor a write_buffer at %.0f writes/s", writes))
	case c.BatchSize > 10_000:
		r.add("puts-unbatched", at{line: line("batch_size")}, fmt.Sprintf(
			"%s.batch_size %d: a batch this large risks timing out and being retried whole", name, c.BatchSize))
	}
	var missing []string
	if c.RPCTimeout == 0 {
		missing = append(missing, "rpc_timeout")
	}
	if c.OperationTimeout == 0 {
		missing = append(missing, "operation_timeout")
	}
	if len(missing) > 0 {
		r.add("client-no-timeouts", at{line: line("")}, fmt.Sprintf(
			"%s does not set %s: HBase's default retries can hold a request for minutes", name, strings.Join(missing, " or ")))
	}
}

// budgetSlack is how far past its latency target a query's operation
// timeout may run before the timeout no longer protects the caller.
const budgetSlack = 100

// checkProfileBudgets: a query that names a client profile should get
// timeouts that fit its latency target; a request path sharing a batch
// job's minutes-long timeout stalls with it.
func (r *reviewer) checkProfileBudgets() {
	for _, q := range r.plan.Queries {
		if q.Profile == "" || q.Latency <= 0 {
			continue
		}
		eff := r.plan.Client.Effective(q.Profile)
		if eff.OperationTimeout <= 0 || eff.OperationTimeout <= budgetSlack*q.Latency {
			continue
		}
		r.add("client-no-timeouts", at{table: q.Table, query: q.Name, line: queryLine(q, "profile")}, fmt.Sprintf(
			"query %s has a %s latency target but its profile %s lets an operation run %s: a stalled call holds its caller long after the budget is spent",
			q.Name, humanDuration(q.Latency), q.Profile, humanDuration(eff.OperationTimeout)))
	}
}

func rateNote(writes float64) string {
	if writes <= 0 {
		return ""
	}
	return fmt.Sprintf(", at %.0f writes/s", writes)
}

// checkPresplit: a table with a high write rate needs regions from the
// start; salted keys get one per bucket from ddl, other keys need presplit.
func checkPresplit(r *reviewer) {
	for _, t := range r.plan.Tables {
		if t.Key == nil || t.Key.Len() == 0 {
			continue
		}
		writes := r.plan.WritesPerSecond(t)
		first := t.Key.Part(0)
		where := at{table: t.Name, line: firstLine(t.Lines["presplit"], r.plan.Ops.Lines["presplit"], t.Line)}
		switch {
		case first.Func == rowkey.Salt:
			continue // ddl splits one region per bucket
		case t.Presplit > 1 && first.Func != rowkey.Hash && first.Func != rowkey.BitReverse:
			// Asked of this table, it is a mistake; inherited from
			// ops.presplit, it is only a note on what ddl can do.
			sev := SeverityWarning
			if t.Lines["presplit"] == 0 {
				sev = SeverityInfo
			}
			r.addSev("presplit-missing", sev, where, fmt.Sprintf(
				"table %s asks for %d regions but its key starts with %s, not a salt or hash: split points cannot be computed without sample keys, so it starts as one region",
				t.Name, t.Presplit, first.Expr))
		case t.Presplit <= 1 && writes >= presplitRate:
			r.add("presplit-missing", where, fmt.Sprintf(
				"table %s starts as one region at %.0f writes/s: one server takes the whole load until splits catch up",
				t.Name, writes))
		}
	}
}

// checkMajorCompaction: HBase's default is a time-based major compaction
// every 7 days at whatever hour that falls.
func checkMajorCompaction(r *reviewer) {
	o := r.plan.Ops
	if o.Offpeak != nil {
		return
	}
	switch o.MajorCompaction {
	case schema.CompactionPeriodic:
		r.add("major-compaction-periodic", at{line: opsLine(r.plan, "major_compaction")},
			"ops.major_compaction is periodic with no off-peak window: every 7 days (with jitter) whole tables are rewritten next to user traffic")
	case "":
		r.addSev("major-compaction-periodic", SeverityInfo, at{line: opsLine(r.plan, "")},
			"ops.major_compaction is not declared, so HBase's default applies: a major compaction every 7 days at any hour")
	}
}

// checkWAL: skipping the log is a decision about losing data.
func checkWAL(r *reviewer) {
	for _, t := range r.plan.Tables {
		if t.Regenerable {
			continue
		}
		where := at{table: t.Name, line: firstLine(t.Lines["durability"], opsLine(r.plan, "durability"), t.Line)}
		switch t.Durability {
		case schema.DurabilitySkipWAL:
			r.add("wal-skipped", where, fmt.Sprintf(
				"table %s is written with skip_wal but is not declared regenerable: a region server crash loses every write not yet flushed", t.Name))
		case schema.DurabilityAsyncWAL:
			r.addSev("wal-skipped", SeverityInfo, where, fmt.Sprintf(
				"table %s is written with async_wal: a crash can lose the last moments of acknowledged writes", t.Name))
		}
	}
}

// checkRegionSize looks at the declared maximum region size and, when the
// workload gives record counts, at how full pre-split regions would be.
func checkRegionSize(r *reviewer) {
	o := r.plan.Ops
	where := at{line: opsLine(r.plan, "region_max_filesize")}
	switch {
	case o.RegionMaxFilesize > 0 && o.RegionMaxFilesize < tinyRegion:
		r.add("region-size", where, fmt.Sprintf(
			"ops.region_max_filesize is %s: regions split early and a large table ends up with thousands of memstores and small flushes",
			humanBytes(o.RegionMaxFilesize)))
	case o.RegionMaxFilesize > giantRegion:
		r.add("region-size", where, fmt.Sprintf(
			"ops.region_max_filesize is %s: regions this big make splits, moves and recovery slow",
			humanBytes(o.RegionMaxFilesize)))
	}
	est, err := cost.EstimatePlan(r.plan, cost.Options{Replication: 1})
	if err != nil {
		return
	}
	records := map[string]int64{}
	for _, e := range est.Entities {
		records[e.Entity] = e.Records
	}
	for _, te := range est.Tables {
		t := r.plan.Table(te.Table)
		n := records[te.Entity]
		if t == nil || te.Shared || n == 0 {
			continue
		}
		regions, why := createdRegions(t)
		total := te.Bytes * float64(n)
		if t.SplitPolicy == store.SplitDisabled {
			// Regions never split: they hold what they are created with.
			if per := total / float64(max(regions, 1)); per > float64(giantRegion) {
				r.add("region-size", at{table: t.Name, line: firstLine(t.Lines["split_policy"], t.Line)}, fmt.Sprintf(
					"table %s has split_policy disabled and %d region(s) for about %s: each grows to about %s and never splits",
					t.Name, regions, humanBytesF(total), humanBytesF(per)))
			}
		}
		if regions <= 1 {
			continue
		}
		// In floats: bytes per record times records can pass int64's range.
		perRegion := total / float64(regions)
		if perRegion >= float64(tinyPresplitRegion) {
			continue
		}
		if t.RegionReplicas > 1 {
			// Every replica is a region to open, balance and fill with
			// memstore: the idle ones multiply.
			why += fmt.Sprintf(", each served %d times (region_replicas)", t.RegionReplicas)
			regions *= t.RegionReplicas
		}
		// A few idle regions cost little; dozens each need a memstore,
		// a share of the flush queue and a line in every balancer run.
		sev := SeverityInfo
		if regions >= manyTinyRegions {
			sev = SeverityWarning
		}
		r.addSev("region-size", sev, at{table: t.Name, line: firstLine(t.Lines["presplit"], opsLine(r.plan, "presplit"), keyLine(t, 0), t.Line)}, fmt.Sprintf(
			"table %s starts with %d regions (%s) but its %d records take about %s in all: about %s per region, where 1 GiB would need %d region(s)",
			t.Name, regions, why, n, humanBytesF(total), humanBytesF(perRegion), max(1, int(math.Min(math.Ceil(total/float64(tinyRegion)), math.MaxInt32)))))
	}
}

// manyTinyRegions is the region count from which needless regions are a
// warning rather than a note.
const manyTinyRegions = 32

// createdRegions is the number of regions ddl creates the table with: one
// per bucket of a leading salt, else the presplit count.
func createdRegions(t *schema.Table) (int, string) {
	if t.Key != nil && t.Key.Len() > 0 {
		if p := t.Key.Part(0); p.Func == rowkey.Salt && p.N > 1 && p.N >= t.Presplit {
			return p.N, "one per bucket of " + p.Expr
		}
	}
	return t.Presplit, "presplit"
}

// queueNames mark a table meant to be consumed item by item.
var queueNames = []string{"queue", "outbox", "inbox"}

// checkTableAsQueue: the schema has no field saying rows are consumed and
// deleted, so this reads two signals: the table's name, and a query that
// takes the oldest rows of a key led by an ascending time or sequence.
func checkTableAsQueue(r *reviewer) {
	named := map[string]bool{}
	for _, t := range r.plan.Tables {
		n := strings.ToLower(t.Name)
		for _, q := range queueNames {
			if strings.Contains(n, q) {
				named[t.Name] = true
				r.add("table-as-queue", at{table: t.Name, line: t.Line}, fmt.Sprintf(
					"table %s is named like a queue: items consumed and deleted one by one leave delete markers every scan for the head must skip", t.Name))
				break
			}
		}
	}
	for _, q := range r.plan.Queries {
		t := r.plan.Table(q.Table)
		// Taking the first N rows with nothing fixed and no window is what
		// a consumer looking for the oldest items does.
		if t == nil || named[t.Name] || t.Key == nil || q.Limit == 0 || len(q.By) > 0 || q.Range != nil || q.MultiGet > 0 {
			continue
		}
		// A reverse scan of an ascending key takes the newest rows: a
		// "latest N" view, not a consumer.
		if q.Direction == schema.DirectionReverse {
			continue
		}
		first := t.Key.Part(0)
		if first.Func != rowkey.Plain && first.Func != rowkey.Text && first.Func != rowkey.Pad {
			continue
		}
		if seq, _ := r.sequential(t, first.Field); !seq {
			continue
		}
		r.add("table-as-queue", at{table: t.Name, query: q.Name, line: q.Line}, fmt.Sprintf(
			"query %s takes the %d oldest rows of %s by %s, the way a queue consumer does; if consumers delete what they take, the head fills with delete markers",
			q.Name, q.Limit, t.Name, first.Expr))
	}
}
