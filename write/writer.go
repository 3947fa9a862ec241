package write

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

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
	// BatchBytes caps the bytes of one store Batch call (store.RowMutation's
	// Size), as a buffered mutator flushes by its write buffer: a batch of
	// wide rows goes out in several calls instead of one request the
	// server may refuse for its size, or hold its handlers on for long. 0
	// means the schema's client write_buffer, else
	// store.DefaultWriteBufferSize. A row larger than the cap goes alone.
	BatchBytes int
	// Fence, when set, is asked before every store call that writes
	// whether this writer still owns its streams (Fence); nil means it
	// always does, as for a log only one process reads.
	Fence Fence
	// Clock is the time, in milliseconds since the epoch, that TTLs are
	// measured against (expired.go); nil means the system clock. The
	// store measures with its own clock: they should agree to well under
	// a TTL.
	Clock func() int64
}

// Writer applies events to a store. It is safe for concurrent use by
// callers that never apply events of one entity concurrently.
type Writer struct {
	plan *schema.Plan
	st   store.Store
	opts Options
	// unsupported is Supports(plan), worked out once.
	unsupported error
	// bounded: the entities that count in a bounded counter.
	bounded map[string]bool
	// lifetime: per entity whose primary row expires, how long its cells
	// stay visible (expired.go).
	lifetime map[string]int64
	// expiring: the tables whose cells expire (expired.go).
	expiring map[string]bool
	// lanes position the events that come from no log (lanes.go).
	lanes lanes
	// scratch holds the derive buffers of earlier Applies (deriveset.go):
	// a pool, which the collector empties, since a batch uses one per
	// state derived and each holds tens of KiB. mutSets holds their
	// mutation lists and sortBufs the room their rows were sorted in: a
	// few of them a batch, kept through collections.
	scratch  sync.Pool
	mutSets  freeList[mutSet]
	sortBufs freeList[sortBuf]
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
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = store.DefaultWriteBufferSize
		if wb := plan.Client.WriteBuffer; wb > 0 && wb < 1<<31 {
			opts.BatchBytes = int(wb)
		}
	}
	if opts.Clock == nil {
		opts.Clock = func() int64 { return time.Now().UnixMilli() }
	}
	w := &Writer{plan: plan, st: st, opts: opts, unsupported: Supports(plan), bounded: map[string]bool{}, lifetime: lifetimes(plan), expiring: expiring(plan)}
	// A batch's mutations come in sets of planChunk plans, and its rows
	// are sorted a table at a time.
	w.mutSets.limit, w.sortBufs.limit = 64, 32
	for _, e := range plan.Entities {
		if len(layout.BoundedTables(plan, e.Name)) > 0 {
			w.bounded[e.Name] = true
		}
	}
	return w
}

// Supports reports whether the writer can keep every table of the plan:
// an error names the first table it cannot write. Fanout tables (a copy of
// an entity into each element of another entity's list) are declared for
// review, cost and hotspots only; writing a log to a schema that has one
// would silently leave it empty, so the writer refuses the whole plan.
func Supports(plan *schema.Plan) error {
	for _, t := range plan.Tables {
		if t.Role == schema.RoleFanout {
			return fmt.Errorf("write: table %s (line %d) is a fanout table, which denorm's writer does not write: it is declared for review, cost and hotspot only", t.Name, t.Line)
		}
	}
	return nil
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
	Expired    int            // events past their primary row's TTL on arrival: skipped
	Redone     int            // entities whose stored version was replayed: copies rewritten
	Refreshed  int            // events of referenced entities, whose values were copied live
	Rejected   int            // events refused
	Cells      map[string]int // cells put, per table
	Deletes    map[string]int // delete markers written, per table
	Increments int            // fast-mode counter increments
	Counted    int            // bounded counter rows written
	// Fanout counts the cells and delete markers that refreshes wrote
	// into referencing rows (live copies), also counted in Cells: the
	// part of the work that grows with how many rows hold a reference.
	Fanout int
	// Unchanged counts the refreshes that found the copied values as
	// they were (a price change, when orders copy the name): the
	// reference row's version moved, and no referencing row was written.
	Unchanged int
}

// newStats starts the stats of a batch of n events.
func newStats(n int) Stats {
	return Stats{Events: n, Cells: map[string]int{}, Deletes: map[string]int{}}
}

// Add accumulates another batch's stats.
func (s *Stats) Add(o Stats) {
	s.Events += o.Events
	s.Applied += o.Applied
	s.Stale += o.Stale
	s.Expired += o.Expired
	s.Redone += o.Redone
	s.Refreshed += o.Refreshed
	s.Rejected += o.Rejected
	s.Increments += o.Increments
	s.Counted += o.Counted
	s.Fanout += o.Fanout
	s.Unchanged += o.Unchanged
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
	// primKey is the primary row the event names: its state's, or for a
	// delete the one its hints give (nil when they give none and the
	// entity has a locator to find it by).
	primKey []byte
	// groupKey identifies the entity in the batch: the entity key when a
	// locator follows it from row to row, else the primary row key.
	groupKey []byte
	// stream and offset are where bounded counters take the event to be:
	// its log position, or its place in the Apply on the writer's lane;
	// streamID is layout.StreamID(stream). The pending record of the
	// event's write keeps them (fold).
	stream   string
	streamID uint64
	offset   int64
}

// group is every event of one entity in a batch, in log order.
type group struct {
	ent    *schema.Entity
	prim   *schema.Table
	events []*pending
	// state is the entity as the store holds it before the batch: the
	// newest of the primary rows it may live in (and the locator's
	// tombstone); at is the row holding it, nil when none does.
	state *layout.State
	at    []byte
	// loc is what the locator says, for entities that have one.
	loc *location
	// others are further primary rows holding a live state of the entity
	// at an older version: what an interrupted move left. Every write of
	// the entity deletes them.
	others []located
	// found is every primary row read for the entity.
	found []located
	// cutShort is set when the locator records a delete newer than every
	// row read: a delete that a crash stopped after its first write (the
	// locator's tombstone) and before its rows. lived is then the row the
	// entity lived in before it, nil when none held it. The replay of that
	// delete finishes it there, as the first attempt would have. A batch
	// that replays the version the rows hold leaves it unset (settle).
	cutShort bool
	lived    []byte
}

// located is a primary row and the state it holds.
type located struct {
	key   []byte
	state *layout.State
	// derived is the state's rows, set by fold for the rows it vacates.
	derived *layout.Derived
}

// Apply writes a batch of events durably. Invalid events are returned as
// Rejected and everything else goes on; an error means the store failed and
// nothing of the batch may be considered applied (it is safe to retry the
// whole batch).
func (w *Writer) Apply(ctx context.Context, evs []*event.Event) (Stats, []Rejected, error) {
	stats := newStats(len(evs))
	if w.unsupported != nil {
		return stats, nil, w.unsupported
	}
	var ln *lane
	if w.needsLane(evs) {
		var err error
		if ln, err = w.lanes.take(); err != nil {
			return stats, nil, err
		}
	}
	st, rej, err := w.apply(ctx, evs, ln, stats)
	err = w.afterRefusal(ctx, evs, ln, err)
	w.lanes.done(ln, len(evs), err == nil)
	return st, rej, err
}

func (w *Writer) apply(ctx context.Context, evs []*event.Event, ln *lane, stats Stats) (Stats, []Rejected, error) {
	b, err := w.stage(ctx, evs, ln, stats, nil)
	if err != nil {
		b.release()
		return b.stats, b.rejected, err
	}
	return w.finish(ctx, b)
}

// prepare validates one event and derives its rows.
func (w *Writer) prepare(ds *deriveSet, i int, ev *event.Event) (*pending, error) {
	ent := w.plan.Entity(ev.Entity)
	if ent == nil {
		return nil, fmt.Errorf("unknown entity %q", ev.Entity)
	}
	prim := w.plan.Primary(ev.Entity)
	if prim == nil {
		return nil, fmt.Errorf("entity %s has no primary table, and no other entity copies its fields live", ev.Entity)
	}
	p := &pending{idx: i, ev: ev, ent: ent}
	if w.plan.Locator(ent.Name) != nil {
		k, err := layout.EntityKey(ent, ev.Key)
		if err != nil {
			return nil, &event.Error{Field: "key", Reason: err.Error()}
		}
		p.groupKey = k
	}
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
		switch {
		case err == nil:
			p.primKey = key
		case p.groupKey == nil:
			return nil, &event.Error{Field: "hints", Reason: fmt.Sprintf("a delete must name the fields of its primary row key %s: %v", prim.Key, err)}
		}
		// With a locator the delete finds the row by the entity key.
		if p.groupKey == nil {
			p.groupKey = p.primKey
		}
		return p, nil
	}
	d, err := ds.derive(w.plan, ent, ev.State)
	if err != nil {
		return nil, err
	}
	if err := w.checkSizes(d); err != nil {
		return nil, err
	}
	p.derived, p.primKey = d, d.PrimaryKey
	if p.groupKey == nil {
		p.groupKey = p.primKey
	}
	return p, nil
}

// checkSizes refuses, before anything is written, an event whose rows the
// store would refuse: a row key over MaxRowKeySize or a cell over the
// maximum cell size, in any table it derives. Left to the store, such an
// event would fail its whole batch on every retry.
func (w *Writer) checkSizes(d *layout.Derived) error {
	row := func(table string, key []byte) error {
		if len(key) == 0 || len(key) > store.MaxRowKeySize {
			return &store.RowKeyError{Table: table, Size: len(key)}
		}
		return nil
	}
	cell := func(table string, key []byte, c layout.Cell) error {
		if n := store.CellSize(key, c.Family, c.Qualifier, c.Value); n > w.opts.MaxCellSize {
			return &store.CellTooBigError{Table: table, Row: key, Family: c.Family, Qualifier: c.Qualifier, Size: n, Limit: w.opts.MaxCellSize}
		}
		return nil
	}
	if err := row(d.PrimaryTable, d.PrimaryKey); err != nil {
		return err
	}
	for _, c := range d.Primary {
		if err := cell(d.PrimaryTable, d.PrimaryKey, c); err != nil {
			return err
		}
	}
	for _, it := range d.Items {
		if err := row(it.Table, it.Row); err != nil {
			return err
		}
		for _, c := range it.Cells {
			if err := cell(it.Table, it.Row, c); err != nil {
				return err
			}
		}
	}
	for _, in := range d.Increments {
		if err := row(in.Table, in.Row); err != nil {
			return err
		}
	}
	return nil
}

// checkReference refuses an event of a referenced entity whose reference
// row or copied values the store would refuse.
func (w *Writer) checkReference(ev *event.Event, referrers []layout.Referrer) error {
	src := w.plan.Entity(ev.Entity)
	for _, rr := range referrers {
		if len(src.Key) != 1 {
			return fmt.Errorf("live copies from %s need a one-field key", src.Name)
		}
		lr, err := layout.NewLiveRef(w.plan, rr.Ref, rr.Lookup, ev.Key[src.Key[0]])
		if err != nil {
			return err
		}
		if len(lr.Row) > store.MaxRowKeySize {
			return &store.RowKeyError{Table: rr.Lookup.Name, Size: len(lr.Row)}
		}
		if ev.Op != event.Upsert {
			continue
		}
		fam := rr.Lookup.Families[0].Name
		for _, from := range lr.From {
			x, ok := ev.State[from]
			if !ok || x == nil {
				continue
			}
			b, err := layout.EncodeValue(src.Field(from).Type, x)
			if err != nil {
				return &event.Error{Field: "state." + from, Reason: err.Error()}
			}
			q := layout.SourceQualifier(from)
			if n := store.CellSize(lr.Row, fam, q, b); n > w.opts.MaxCellSize {
				return &store.CellTooBigError{Table: rr.Lookup.Name, Row: lr.Row, Family: fam, Qualifier: q, Size: n, Limit: w.opts.MaxCellSize}
			}
		}
	}
	return nil
}

// stateRead tells readStatesOf what it may take as read, or read at once.
type stateRead int

const (
	// readLocators reads the locator rows first, then the primary rows
	// they and the events name.
	readLocators stateRead = iota
	// locatorsRead: the groups' locator rows are read already.
	locatorsRead
	// rowsBeside reads the primary rows the events name beside the
	// locator rows, and afterwards only the rows a locator adds: for
	// entities the batch before wrote (a staged batch's later groups),
	// whose locator rows are known not to be empty, so those reads are
	// ones the groups would make anyway, one round trip sooner.
	rowsBeside
)

// readStatesOf reads, for every group, the locator row (when the entity has
// one) and then every primary row the entity may live in. Each step reads
// the rows of every group at once, one multi-get per table and chunk
// (getRows): on HBase a Get is a round trip, and a batch's groups would
// otherwise wait on a few thousand of them.
func (w *Writer) readStatesOf(ctx context.Context, groups []*group, how stateRead) error {
	// ahead holds the primary rows read beside the locator rows, by
	// rowID.
	var ahead map[string]store.Row
	switch how {
	case readLocators:
		if err := w.readLocations(ctx, groups); err != nil {
			return err
		}
	case rowsBeside:
		err := both(ctx, func(ctx context.Context) error {
			return w.readLocations(ctx, groups)
		}, func(ctx context.Context) (err error) {
			ahead, err = w.readNamedRows(ctx, groups)
			return err
		})
		if err != nil {
			return err
		}
	}
	type cand struct {
		g   int
		key []byte
	}
	var tables []*schema.Table
	cands := map[*schema.Table][]cand{}
	for i, g := range groups {
		var keys [][]byte
		if g.loc != nil {
			if g.loc.empty() {
				// Nothing was ever written of the entity: a primary row is
				// written only after its locator lists it, and no write
				// empties a locator row (reconcile checks both, see
				// docs/writer.md). Its primary rows need no read.
				continue
			}
			for _, x := range g.loc.at {
				keys = appendKey(keys, x.Key)
			}
		}
		for _, p := range g.events {
			keys = appendKey(keys, p.primKey)
		}
		if _, ok := cands[g.prim]; !ok {
			tables = append(tables, g.prim)
		}
		for _, k := range keys {
			cands[g.prim] = append(cands[g.prim], cand{i, k})
		}
	}
	found := make([][]located, len(groups))
	for _, t := range tables {
		cs := cands[t]
		rows := make([]store.Row, len(cs))
		var keys [][]byte
		var at []int // where each of keys goes in rows
		for k, c := range cs {
			if ahead != nil {
				if row, ok := ahead[rowID(t.Name, c.key)]; ok {
					rows[k] = row
					continue
				}
			}
			keys, at = append(keys, c.key), append(at, k)
		}
		if len(keys) > 0 {
			got, err := w.getRows(ctx, t.Name, keys)
			if err != nil {
				return fmt.Errorf("write: read primary rows of %s: %w", t.Name, err)
			}
			for j, k := range at {
				rows[k] = got[j]
			}
		}
		// Decoding the rows is CPU work, one row at a time.
		states := make([]*layout.State, len(cs))
		if err := w.each(ctx, len(cs), func(_ context.Context, k int) error {
			st, err := layout.ReadState(w.plan, groups[cs[k].g].ent, t, rows[k])
			if err != nil {
				return fmt.Errorf("write: read primary row %s of %s: %w", store.Printable(cs[k].key), t.Name, err)
			}
			states[k] = st
			return nil
		}); err != nil {
			return err
		}
		for k, c := range cs {
			found[c.g] = append(found[c.g], located{key: c.key, state: states[k]})
		}
	}
	for i, g := range groups {
		g.settle(found[i])
	}
	return nil
}

// readNamedRows reads the primary rows the groups' events name, by rowID.
func (w *Writer) readNamedRows(ctx context.Context, groups []*group) (map[string]store.Row, error) {
	// Per table, the keys to read and their row ids, each row once.
	type named struct {
		keys [][]byte
		ids  []string
	}
	var tables []*schema.Table
	byTable := map[*schema.Table]*named{}
	out := map[string]store.Row{}
	for _, g := range groups {
		for _, p := range g.events {
			if p.primKey == nil {
				continue
			}
			id := rowID(g.prim.Name, p.primKey)
			if _, ok := out[id]; ok {
				continue
			}
			out[id] = store.Row{}
			n := byTable[g.prim]
			if n == nil {
				n = &named{}
				byTable[g.prim] = n
				tables = append(tables, g.prim)
			}
			n.keys, n.ids = append(n.keys, p.primKey), append(n.ids, id)
		}
	}
	for _, t := range tables {
		n := byTable[t]
		rows, err := w.getRows(ctx, t.Name, n.keys)
		if err != nil {
			return nil, fmt.Errorf("write: read primary rows of %s: %w", t.Name, err)
		}
		for k, id := range n.ids {
			out[id] = rows[k]
		}
	}
	return out, nil
}

// readLocations reads the locator row of every group whose entity has one.
func (w *Writer) readLocations(ctx context.Context, groups []*group) error {
	var tables []*schema.Table
	byTable := map[*schema.Table][]int{}
	for i, g := range groups {
		if lt := w.plan.Locator(g.ent.Name); lt != nil {
			if _, ok := byTable[lt]; !ok {
				tables = append(tables, lt)
			}
			byTable[lt] = append(byTable[lt], i)
		}
	}
	for _, lt := range tables {
		idx := byTable[lt]
		keys := make([][]byte, len(idx))
		for k, i := range idx {
			row, err := lt.Key.Encode(groups[i].events[0].ev.Key)
			if err != nil {
				return fmt.Errorf("write: locator key of %s: %w", lt.Entity, err)
			}
			keys[k] = row
		}
		rows, err := w.getRows(ctx, lt.Name, keys)
		if err != nil {
			return fmt.Errorf("write: read locator rows of %s: %w", lt.Name, err)
		}
		for k, i := range idx {
			loc := &location{table: lt, row: keys[k]}
			loc.at, loc.tomb = layout.ReadLocation(lt, rows[k])
			groups[i].loc = loc
		}
	}
	return nil
}

// readChunk is the rows one multi-get of getRows asks for: large enough
// that a round trip carries many rows, small enough that a batch's reads
// spread over several connections.
const readChunk = 128

// getRows reads the rows of keys from table, in the order of keys, in
// multi-gets of readChunk rows, Readers of them at a time.
func (w *Writer) getRows(ctx context.Context, table string, keys [][]byte) ([]store.Row, error) {
	gets := make([]store.Get, len(keys))
	for k, key := range keys {
		gets[k] = store.Get{Row: key}
	}
	return w.getMany(ctx, table, gets)
}

// getMany is getRows for Gets that may select columns.
func (w *Writer) getMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	rows := make([]store.Row, len(gets))
	chunks := (len(gets) + readChunk - 1) / readChunk
	err := w.each(ctx, chunks, func(ctx context.Context, c int) error {
		lo, hi := c*readChunk, min(len(gets), (c+1)*readChunk)
		got, err := store.GetMany(ctx, w.st, table, gets[lo:hi])
		if err != nil {
			return err
		}
		copy(rows[lo:hi], got)
		return nil
	})
	return rows, err
}

// settle picks the entity's current state among the rows read: the newest
// version wins, and on a tie a live state beats a tombstone (a move to
// version v leaves a tombstone at v in the row it left); the locator's
// tombstone counts as a deleted state of its own. Other rows with a live
// state are kept to be cleared.
func (g *group) settle(found []located) {
	g.state, g.found = &layout.State{}, found
	best := -1
	for i, f := range found {
		if best < 0 {
			best = i
			continue
		}
		b := found[best].state
		if f.state.Version > b.Version || f.state.Version == b.Version && f.state.Exists() && !b.Exists() {
			best = i
		}
	}
	if best >= 0 && found[best].state.Version > 0 {
		g.state, g.at = found[best].state, found[best].key
	}
	if g.loc != nil && g.loc.tomb > g.state.Version && !g.replays(g.state.Version) {
		// A delete the locator recorded before the rows it deletes were
		// written (or of an entity no row held). Its replay finishes it in
		// the row the entity lived in (fold); any other live row is left
		// over, and is vacated.
		//
		// Not while the batch replays the version the rows hold: that
		// version's write may be unfinished too (its copies, and its
		// bounded counts, which a later batch of the stream takes as
		// counted once this one commits), and is redone first, as any
		// replay is; the delete's own replay, which is in the log from
		// where its attempt failed, finishes the delete after it.
		g.cutShort, g.lived = true, g.at
		g.state, g.at, best = &layout.State{Version: g.loc.tomb, Deleted: true}, nil, -1
	}
	for i, f := range found {
		if i != best && f.state.Exists() {
			g.others = append(g.others, f)
		}
	}
}

// replays reports whether the group holds an event at version v > 0.
func (g *group) replays(v int64) bool {
	if v <= 0 {
		return false
	}
	for _, p := range g.events {
		if p.ev.Version == v {
			return true
		}
	}
	return false
}

// appendKey adds a row key to a list of distinct keys; nil is no key.
func appendKey(keys [][]byte, k []byte) [][]byte {
	if k == nil {
		return keys
	}
	for _, x := range keys {
		if bytes.Equal(x, k) {
			return keys
		}
	}
	return append(keys, k)
}
