package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka reads events from a topic as a member of a consumer group. It is a
// replayable log in the writer's sense: Commit commits exactly the offsets
// of the records Next returned, and a member that dies before committing
// leaves them to be read again by whoever gets the partition next.
//
// Rebalances are held off between a Next that returned records and the
// Commit that follows (franz-go's BlockRebalanceOnPoll), so a partition is
// never taken away while a batch from it is being applied: the batch is
// finished and committed first. A writer that reads ahead (Mark,
// CommitMark) holds two batches at times: rebalances then wait for the
// last mark's commit, and Ready tells it to stop reading ahead while one
// waits. Kafka keeps the records of one key in one
// partition, in order, so all events of one entity go through one member.
type Kafka struct {
	cl    *kgo.Client
	topic string
	group string
	log   *slog.Logger

	stopOnce  sync.Once
	stopped   chan struct{}
	closeOnce sync.Once

	// pending are the records returned by Next since the last Commit, at
	// most one per partition (the last), since a commit names the next
	// offset to read.
	pending map[int32]*kgo.Record

	mu sync.Mutex // guards what the group callbacks and metrics touch
	// applied holds records whose batch was applied but whose commit has
	// not succeeded yet; a revoke commits them before giving the
	// partitions away.
	applied map[int32]*kgo.Record
	// marks counts the marks handed out and not yet committed: while one
	// is, records are in hand and rebalances stay held off.
	marks int
	// waiting is set when a rebalance waits for the records in hand
	// (franz-go's OnPartitionsCallbackBlocked): Ready then says no, so
	// that the writer finishes what it holds, commits and lets it go.
	waiting  atomic.Bool
	assigned map[int32]bool
	lag      map[int32]int64 // per partition: high watermark minus the next offset to read
	rebal    int

	// The fence (kafka_fence.go): the lease Hold grants, and when a
	// rebalance was first known to wait, in which generation.
	lease            lease
	instance         string
	session          time.Duration
	rebalanceTimeout time.Duration
	rebalanceMu      sync.Mutex
	rebalanceAt      time.Time
	rebalanceGen     int32
}

// KafkaOptions configure OpenKafka.
type KafkaOptions struct {
	URL KafkaURL
	// Logger receives the group's assignments and the client's warnings;
	// nil discards them.
	Logger *slog.Logger
	// ClientID names this member in the broker's group listing.
	ClientID string
}

// OpenKafka joins the URL's consumer group on its topic. The group must be
// named. Nothing is read until the first Next.
func OpenKafka(ctx context.Context, opts KafkaOptions) (*Kafka, error) {
	u := opts.URL
	if u.Group == "" {
		return nil, fmt.Errorf("source: kafka URL %s names no consumer group (add ?group=NAME)", u)
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	k := &Kafka{
		topic:    u.Topic,
		group:    u.Group,
		log:      lg,
		stopped:  make(chan struct{}),
		pending:  map[int32]*kgo.Record{},
		applied:  map[int32]*kgo.Record{},
		assigned: map[int32]bool{},
		lag:      map[int32]int64{},
	}
	reset := kgo.NewOffset().AtStart()
	if u.Start == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	kopts := []kgo.Opt{
		kgo.SeedBrokers(u.Brokers...),
		kgo.ConsumerGroup(u.Group),
		kgo.ConsumeTopics(u.Topic),
		kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(k.onAssigned),
		kgo.OnPartitionsRevoked(k.onRevoked),
		kgo.OnPartitionsLost(k.onLost),
		kgo.OnPartitionsCallbackBlocked(func(_ context.Context, cl *kgo.Client) {
			k.waiting.Store(true)
			k.noteRebalance(cl)
		}),
		kgo.WithLogger(kgoLogger{lg}),
		// A short wait keeps a batch from sitting on the broker when the
		// stream is slow; under load fetches fill long before it.
		kgo.FetchMaxWait(500 * time.Millisecond),
	}
	if u.SessionTimeout > 0 {
		kopts = append(kopts, kgo.SessionTimeout(u.SessionTimeout))
	}
	if u.Instance != "" {
		kopts = append(kopts, kgo.InstanceID(u.Instance))
		k.instance = u.Instance
	}
	if opts.ClientID != "" {
		kopts = append(kopts, kgo.ClientID(opts.ClientID))
	}
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return nil, fmt.Errorf("source: kafka client for %s: %w", u, err)
	}
	k.cl = cl
	k.session, k.rebalanceTimeout = timeouts(cl)
	return k, nil
}

// Next waits for records and returns up to max of them. After Stop it
// returns io.EOF, so that the writer's loop finishes the batch in hand,
// commits it and ends.
func (k *Kafka) Next(ctx context.Context, limit int) ([]Record, error) {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-k.stopped:
			cancel()
		case <-pctx.Done():
		}
	}()
	for {
		select {
		case <-k.stopped:
			return nil, io.EOF
		default:
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fs := k.cl.PollRecords(pctx, limit)
		if fs.IsClientClosed() {
			return nil, fmt.Errorf("source: kafka client closed while reading %s", k.topic)
		}
		var out []Record
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if p.Err != nil {
				if !errors.Is(p.Err, context.Canceled) {
					k.log.Warn("kafka fetch error", "topic", p.Topic, "partition", p.Partition, "err", p.Err)
				}
				return
			}
			if len(p.Records) == 0 {
				return
			}
			for _, r := range p.Records {
				out = append(out, Record{
					Data:   r.Value,
					Offset: r.Offset,
					Stream: "kafka:" + r.Topic + "/" + strconv.Itoa(int(r.Partition)),
					Where:  r.Topic + "/" + strconv.Itoa(int(r.Partition)) + "@" + strconv.FormatInt(r.Offset, 10),
				})
			}
			last := p.Records[len(p.Records)-1]
			k.pending[p.Partition] = last
			k.mu.Lock()
			k.lag[p.Partition] = max(0, p.HighWatermark-last.Offset-1)
			k.mu.Unlock()
		})
		if len(out) > 0 {
			return out, nil
		}
		// Nothing returned (an error, a cancelled poll): unless the
		// writer holds an earlier batch (a mark not yet committed), no
		// batch is in hand, so a rebalance may proceed before polling
		// again.
		k.allowRebalanceIfIdle()
	}
}

// allowRebalanceIfIdle lets a held-off rebalance go ahead when no batch is
// in hand: no mark is uncommitted and Next returned nothing since the last.
func (k *Kafka) allowRebalanceIfIdle() {
	k.mu.Lock()
	idle := k.marks == 0 && len(k.pending) == 0
	k.mu.Unlock()
	if idle {
		k.allowRebalance()
	}
}

// allowRebalance lets a held-off rebalance go ahead.
func (k *Kafka) allowRebalance() {
	k.waiting.Store(false)
	k.cl.AllowRebalance()
}

// Commit commits the offsets after every record Next returned since the
// last Commit, then lets a held-off rebalance go ahead.
func (k *Kafka) Commit(ctx context.Context) error {
	k.mu.Lock()
	for p, r := range k.pending {
		k.applied[p] = r
	}
	k.mu.Unlock()
	clear(k.pending)
	if err := k.commitApplied(ctx); err != nil {
		return err
	}
	k.allowRebalance()
	return nil
}

// commitApplied commits the records whose batches were applied.
func (k *Kafka) commitApplied(ctx context.Context) error {
	k.mu.Lock()
	recs := make([]*kgo.Record, 0, len(k.applied))
	for _, r := range k.applied {
		recs = append(recs, r)
	}
	k.mu.Unlock()
	if len(recs) > 0 {
		if err := k.cl.CommitRecords(ctx, recs...); err != nil {
			return fmt.Errorf("source: commit offsets of %s for group %s: %w", k.topic, k.group, err)
		}
	}
	k.mu.Lock()
	for _, r := range recs {
		if k.applied[r.Partition] == r {
			delete(k.applied, r.Partition)
		}
	}
	k.mu.Unlock()
	return nil
}

// kafkaMark is what a mark commits: per partition, the last record
// returned before it.
type kafkaMark map[int32]*kgo.Record

// Mark names every record Next has returned so far, for CommitMark: the
// writer reads the next batch before it commits the last one.
func (k *Kafka) Mark() any {
	m := kafkaMark(maps.Clone(k.pending))
	clear(k.pending)
	k.mu.Lock()
	k.marks++
	k.mu.Unlock()
	return m
}

// CommitMark commits the offsets after the records up to a mark. Once no
// mark is left uncommitted and Next has returned nothing since, a held-off
// rebalance may go ahead, as after Commit.
func (k *Kafka) CommitMark(ctx context.Context, mark any) error {
	m, ok := mark.(kafkaMark)
	if !ok {
		return fmt.Errorf("source: commit %s: %T is not a mark of a kafka source", k.topic, mark)
	}
	k.mu.Lock()
	for p, r := range m {
		if cur, ok := k.applied[p]; !ok || r.Offset > cur.Offset {
			k.applied[p] = r
		}
	}
	k.mu.Unlock()
	if err := k.commitApplied(ctx); err != nil {
		return err
	}
	k.mu.Lock()
	k.marks--
	k.mu.Unlock()
	k.allowRebalanceIfIdle()
	return nil
}

// Ready reports whether the writer may read the next batch before it
// commits the one in hand: records are buffered (Next returns at once, so
// a slow stream never holds a batch uncommitted), and no rebalance waits.
func (k *Kafka) Ready() bool {
	return !k.waiting.Load() && k.cl.BufferedFetchRecords() > 0
}

// Stop makes Next return io.EOF: the batch in hand is still applied and
// committed by the writer's loop, then the loop ends. Safe to call from a
// signal handler's goroutine, more than once.
func (k *Kafka) Stop() { k.stopOnce.Do(func() { close(k.stopped) }) }

// Close leaves the group (the last revoke commits whatever was applied and
// not yet committed) and closes the client. Records returned by Next and
// not committed are left for the next owner of their partitions.
func (k *Kafka) Close() error {
	k.closeOnce.Do(func() {
		k.Stop()
		clear(k.pending)
		k.cl.CloseAllowingRebalance()
	})
	return nil
}

// Assigned lists the partitions this member holds now.
func (k *Kafka) Assigned() []int32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]int32, 0, len(k.assigned))
	for p := range k.assigned {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Lag is how many records of the assigned partitions lie beyond those
// returned by Next, as of the last fetch.
func (k *Kafka) Lag() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	var n int64
	for _, l := range k.lag {
		n += l
	}
	return n
}

// Rebalances counts the assignments this member received.
func (k *Kafka) Rebalances() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rebal
}

func (k *Kafka) onAssigned(_ context.Context, _ *kgo.Client, added map[string][]int32) {
	k.mu.Lock()
	for _, p := range added[k.topic] {
		k.assigned[p] = true
	}
	k.rebal++
	k.mu.Unlock()
	k.log.Info("partitions assigned", "topic", k.topic, "group", k.group,
		"added", sorted(added[k.topic]), "partitions", k.Assigned())
}

// onRevoked runs before partitions go to another member. Every batch
// Next returned has been committed (rebalances wait for Commit), except
// one whose commit failed: that one was applied, so it is committed now.
func (k *Kafka) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	k.mu.Lock()
	var recs []*kgo.Record
	for _, p := range revoked[k.topic] {
		if r := k.applied[p]; r != nil {
			recs = append(recs, r)
		}
	}
	k.mu.Unlock()
	if len(recs) > 0 {
		if err := cl.CommitRecords(ctx, recs...); err != nil {
			k.log.Warn("commit on revoke failed: the new owner replays the last batch", "topic", k.topic, "err", err)
		}
	}
	k.drop(revoked[k.topic])
	k.log.Info("partitions revoked", "topic", k.topic, "group", k.group,
		"revoked", sorted(revoked[k.topic]), "partitions", k.Assigned())
}

// onLost runs when the group took partitions away without a revoke (a
// session that expired): nothing can be committed for them any more.
func (k *Kafka) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	k.drop(lost[k.topic])
	k.log.Warn("partitions lost: their uncommitted events will be replayed by the new owner", "topic", k.topic,
		"group", k.group, "lost", sorted(lost[k.topic]))
}

func (k *Kafka) drop(parts []int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range parts {
		delete(k.assigned, p)
		delete(k.lag, p)
		delete(k.applied, p)
	}
}

func sorted(ps []int32) []int32 {
	out := slices.Clone(ps)
	slices.Sort(out)
	if out == nil {
		out = []int32{}
	}
	return out
}

// kgoLogger passes the client's warnings and errors to slog; its info and
// debug lines are too chatty for a long-running command's log.
type kgoLogger struct{ l *slog.Logger }

func (g kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (g kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	switch level {
	case kgo.LogLevelError:
		g.l.Error("kafka: "+msg, keyvals...)
	case kgo.LogLevelWarn:
		g.l.Warn("kafka: "+msg, keyvals...)
	}
}
