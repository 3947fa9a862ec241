package schema

// WhenShare is the fraction of an entity's events that have a row in t:
// 1 for tables without `when`; for a partial table, the share of the when
// field's weighted distribution held by set values (anything but "", "0",
// "false"). Without a weighted distribution for the field it is 1, the
// cautious answer for load estimates.
func (p *Plan) WhenShare(t *Table) float64 {
	if t.When == "" {
		return 1
	}
	d := p.Workload.Distribution(t.Entity, t.When)
	if d == nil || d.Kind != DistWeighted || len(d.Values) == 0 {
		return 1
	}
	var set, total float64
	for v, share := range d.Values {
		total += share
		if v != "" && v != "0" && v != "false" {
			set += share
		}
	}
	if total <= 0 {
		return 1
	}
	return set / total
}

// RowsPerEvent is how many rows of t one entity event writes on average:
// the when share, times the typical element count for tables with `each`
// (the max when no typical count is declared), or for a fanout table the
// typical length of the list it copies into.
func (p *Plan) RowsPerEvent(t *Table) float64 {
	rows := p.WhenShare(t)
	if t.Fanout != nil {
		// One copy per element of the target's list, typically.
		return rows * float64(t.Fanout.Typical)
	}
	if t.Each == "" {
		return rows
	}
	ent := p.Entity(t.Entity)
	if ent == nil {
		return rows
	}
	c := ent.Child(t.Each)
	if c == nil {
		return rows
	}
	n := c.Typical
	if n == 0 {
		n = c.Max
	}
	return rows * float64(n)
}

// WritesPerSecond estimates the row writes per second t receives from the
// workload's writes_per_second (0 when the workload does not say).
func (p *Plan) WritesPerSecond(t *Table) float64 {
	return p.EventsPerSecond(t.Entity) * p.RowsPerEvent(t)
}

// EventsPerSecond is the event rate of one entity: its own from
// writes_by_entity, else workload.writes_per_second.
func (p *Plan) EventsPerSecond(entity string) float64 {
	if r, ok := p.Workload.EntityWrites[entity]; ok {
		return r
	}
	return p.Workload.WritesPerSecond
}
