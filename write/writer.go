package write

import (
	"context"

	"fmt"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// Options tune a Writer.
type Options struct {
	// MaxCellSize refuses events that would write a larger cell; 0 means
	// store.DefaultMaxCellSize.
	MaxCellSize int
	// Readers is how many primary rows are read at once; 0 means 8.
	Readers int
	// BatchRows caps the rows of one store Batch call; 0 means 1000.
	BatchRows int
}

// Writer applies events to a store. It is safe for concurrent use by
// callers that never apply events of one entity concurrently.
type Writer struct {
	plan *schema.Plan
	st   store.Store
	opts Options
}

// New returns a writer for the plan's tables in st.
func New(plan *schema.Plan, st store.Store, opts Options) *Writer {
	if opts.MaxCellSize <= 0 {
		opts.MaxCellSize = store.DefaultMaxCellSize
	}
	if opts.Readers <= 0 {
		opts.Readers = 8
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 1000
	}
	return &Writer{plan: plan, st: st, opts: opts}
}

// Rejected is an event the writer refused, with why. The caller sends it to
// the dead letter.
type Rejected struct {
	Index  int // position in the batch given to Apply
	Event  *event.Event
	Reason error
}

// Stats counts what one Apply did.
type Stats struct {
	Events     int            // events given
	Applied    int            // events whose state was written
	Stale      int            // events older than the entity's stored version: skipped
	Redone     int            // entities whose stored version was replayed: copies rewritten
	Refreshed  int            // events of referenced entities, whose values were copied live
	Rejected   int            // events refused
	Cells      map[string]int // cells put, per table
	Deletes    map[string]int // delete markers written, per table
	Increments int            // fast-mode counter increments
}

// Add accumulates another batch's stats.
func (s *Stats) Add(o Stats) {
	s.Events += o.Events
	s.Applied += o.Applied
	s.Stale += o.Stale
	s.Redone += o.Redone
	s.Refreshed += o.Refreshed
	s.Rejected += o.Rejected
	s.Increments += o.Increments
	if s.Cells == nil {
		s.Cells, s.Deletes = map[string]int{}, map[string]int{}
	}
	for k, v := range o.Cells {
		s.Cells[k] += v
	}
	for k, v := range o.Deletes {
		s.Deletes[k] += v
	}
}

// pending is one valid event with what it derives.
type pending struct {
	idx     int
	ev      *event.Event
	ent     *schema.Entity
	derived *layout.Derived // nil for a delete
	primKey []byte
}

// group is every event of one entity in a batch, in log order.
type group struct {
	ent    *schema.Entity
	prim   *schema.Table
	events []*pending
	state  *layout.State // as read before the batch; nil when not read
}

// Apply writes a batch of events durably. Invalid events are returned as
// Rejected and everything else goes on; an error means the store failed and
// nothing of the batch may be considered applied (it is safe to retry the
// whole batch).
func (w *Writer) Apply(ctx context.Context, evs []*event.Event) (Stats, []Rejected, error) {
	stats := Stats{Events: len(evs), Cells: map[string]int{}, Deletes: map[string]int{}}
	var rejected []Rejected
	var groups []*group
	byKey := map[string]*group{}
	var refreshes []*event.Event
	todo := make([]int, 0, len(evs))
	for i, ev := range evs {
		referrers := layout.ReferencesTo(w.plan, ev.Entity)
		if len(referrers) > 0 {
			refreshes = append(refreshes, ev)
			if w.plan.Primary(ev.Entity) == nil {
				continue
			}
		}
		todo = append(todo, i)
	}
	// Validating and deriving one event is CPU work that needs no other
	// event: it runs on several goroutines, and the results are grouped
	// below in event order.
	preps := make([]*pending, len(todo))
	perrs := make([]error, len(todo))
	if err := w.each(ctx, len(todo), func(_ context.Context, k int) error {
		preps[k], perrs[k] = w.prepare(todo[k], evs[todo[k]])
		return nil
	}); err != nil {
		return stats, rejected, err
	}
	for k, i := range todo {
		ev, p := evs[i], preps[k]
		if perrs[k] != nil {
			rejected = append(rejected, Rejected{Index: i, Event: ev, Reason: perrs[k]})
			continue
		}
		id := ev.Entity + "\x00" + string(p.primKey)
		g := byKey[id]
		if g == nil {
			g = &group{ent: p.ent, prim: w.plan.Primary(ev.Entity)}
			byKey[id] = g
			groups = append(groups, g)
		}
		g.events = append(g.events, p)
	}
	stats.Rejected = len(rejected)
	if err := w.readStates(ctx, groups); err != nil {
		return stats, rejected, err
	}
	// Folding one entity's events (deriving its stored state) and listing
	// its new live references need no other entity either.
	eps := make([]*entityPlan, len(groups))
	folded := make([]Stats, len(groups))
	if err := w.each(ctx, len(groups), func(_ context.Context, i int) error {
		ep, err := w.fold(groups[i], &folded[i])
		if ep != nil {
			w.newLiveRefs(ep) // computed here, in parallel, and kept in ep
		}
		eps[i] = ep
		return err
	}); err != nil {
		return stats, rejected, err
	}
	var plans []*entityPlan
	for i, ep := range eps {
		stats.Add(folded[i])
		if ep != nil {
			plans = append(plans, ep)
		}
	}
	if err := w.write(ctx, plans, &stats); err != nil {
		return stats, rejected, err
	}
	// Live copies of referenced entities changed in this batch, after the
	// lookup rows of this batch's entities are written, so none is missed.
	if err := w.refresh(ctx, refreshes, &stats); err != nil {
		return stats, rejected, err
	}
	return stats, rejected, nil
}

// prepare validates one event and derives its rows.
func (w *Writer) prepare(i int, ev *event.Event) (*pending, error) {
	ent := w.plan.Entity(ev.Entity)
	if ent == nil {
		return nil, fmt.Errorf("unknown entity %q", ev.Entity)
	}
	prim := w.plan.Primary(ev.Entity)
	if prim == nil {
		return nil, fmt.Errorf("entity %s has no primary table, and no other entity copies its fields live", ev.Entity)
	}
	p := &pending{idx: i, ev: ev, ent: ent}
	if ev.Op == event.Delete {
		// The primary row key needs the key fields the event key lacks;
		// a delete names them in its hints.
		vals := map[string]any{}
		for k, v := range ev.Key {
			vals[k] = v
		}
		for k, v := range ev.Hints {
			if _, isKey := vals[k]; !isKey && v != nil {
				vals[k] = v
			}
		}
		key, err := prim.Key.Encode(vals)
		if err != nil {
			return nil, &event.Error{Field: "hints", Reason: fmt.Sprintf("a delete must name the fields of its primary row key %s: %v", prim.Key, err)}
		}
		p.primKey = key
		return p, nil
	}
	d, err := layout.Derive(w.plan, ent, ev.State)
	if err != nil {
		return nil, err
	}
	if err := w.checkSizes(d); err != nil {
		return nil, err
	}
	p.derived, p.primKey = d, d.PrimaryKey
	return p, nil
}

func (w *Writer) checkSizes(d *layout.Derived) error {
	check := func(table string, row []byte, c layout.Cell) error {
		if len(c.Value) > w.opts.MaxCellSize {
			return &store.CellTooBigError{Table: table, Row: row, Family: c.Family, Qualifier: c.Qualifier, Size: len(c.Value), Limit: w.opts.MaxCellSize}
		}
		return nil
	}
	for _, c := range d.Primary {
		if err := check(d.PrimaryTable, d.PrimaryKey, c); err != nil {
			return err
		}
	}
	for _, it := range d.Items {
		for _, c := range it.Cells {
			if err := check(it.Table, it.Row, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// readStates reads the primary row of every group, several at a time.
func (w *Writer) readStates(ctx context.Context, groups []*group) error {
	return w.each(ctx, len(groups), func(ctx context.Context, i int) error {
		g := groups[i]
		key := g.events[0].primKey
		row, err := w.st.Get(ctx, g.prim.Name, store.Get{Row: key})
		if err == nil {
			g.state, err = layout.ReadState(w.plan, g.ent, g.prim, row)
		}
		if err != nil {
			return fmt.Errorf("write: read primary row %s of %s: %w", store.Printable(key), g.prim.Name, err)
		}
		return nil
	})
}
