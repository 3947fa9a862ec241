package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lease is what Hold grants: the time until which this member's writes may
// land for the partitions of the batches in hand.
//
// Invariant: until is at most half a session timeout after the send of a
// heartbeat that the group coordinator answered for this member and
// generation. The coordinator expires a member only a full session timeout
// after the last heartbeat it received, and hands its partitions on only
// after that, so the other half is the room a write sent before until has
// to be applied. While a rebalance is under way, Hold also caps it at half
// a rebalance timeout after this member first heard of it (capped):
// the coordinator drops a member that has not rejoined by the rebalance
// timeout, and a member holding a batch does not rejoin.
type lease struct {
	mu      sync.Mutex
	until   time.Time
	granted time.Time // the send of the heartbeat that granted until
	tried   time.Time // the send of the last heartbeat, answered or not
	member  string
	gen     int32
}

// Hold is the writer's fence (write.Fence) for this member's partitions:
// the time until which what the writer sends may land. It confirms the
// member is still in the group with a heartbeat of its own, sent as the
// member (its id and generation) when an eighth of a session timeout has
// passed since the last one it sent, or the last hold has ended; franz-go's
// own heartbeats go on as before, and tell nothing a caller can read. So a
// write call gets at least three eighths of a session timeout before its
// deadline while the heartbeats succeed (2.25 s at the broker's least
// session timeout, 6 s; 17 s at the default 45 s).
//
// Why not the partitions-lost callback: with rebalances held off while a
// batch is in hand, franz-go runs it only after the batch, and a member
// paused for longer than its session (a long garbage collection, a
// stopped process, a suspended machine) resumes and sends its next write
// before it hears of anything. The heartbeat asks the coordinator itself.
//
// A failed heartbeat (a network error) leaves the current hold standing
// until it ends; a refusal (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
// FENCED_INSTANCE_ID) ends it at once.
func (k *Kafka) Hold(ctx context.Context) (time.Time, error) {
	l := &k.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	member, gen := k.cl.GroupMetadata()
	if member != l.member || gen != l.gen {
		l.member, l.gen, l.until, l.granted, l.tried = member, gen, time.Time{}, time.Time{}, time.Time{}
	}
	// A heartbeat that failed is tried again only after a sixteenth of a
	// session timeout while the hold stands: during an outage of the
	// coordinator every write call would otherwise wait on one, in turn.
	if before(now, l.until) && (now.Sub(l.granted) < k.session/8 || now.Sub(l.tried) < k.session/16) {
		return k.capped(gen, l.until)
	}
	err := k.renew(ctx, member, gen)
	var gone *memberGoneError
	if errors.As(err, &gone) {
		l.until = time.Time{}
		return time.Time{}, err
	}
	if err != nil && !before(now, l.until) {
		return time.Time{}, err
	}
	if err != nil {
		k.log.Warn("kafka: could not renew the hold on the partitions; keeping the current one", "until", l.until, "err", err)
	}
	return k.capped(gen, l.until)
}

// renew sends the heartbeat and, when the coordinator answers that the
// member is in the group, sets the lease from its send. The caller holds
// k.lease.mu.
func (k *Kafka) renew(ctx context.Context, member string, gen int32) error {
	if member == "" || gen < 0 {
		return &memberGoneError{group: k.group, why: errors.New("not a member of the group")}
	}
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group = k.group
	req.Generation = gen
	req.MemberID = member
	if k.instance != "" {
		req.InstanceID = &k.instance
	}
	ctx, cancel := context.WithTimeout(ctx, k.session/8)
	defer cancel()
	sent := time.Now()
	k.lease.tried = sent
	resp, err := req.RequestWith(ctx, k.cl)
	if err != nil {
		return fmt.Errorf("source: heartbeat of member %s (generation %d) of group %s: %w", member, gen, k.group, err)
	}
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.RebalanceInProgress):
		k.noteRebalanceAt(sent, gen)
	default:
		return &memberGoneError{group: k.group, member: member, gen: gen, why: err}
	}
	k.lease.until, k.lease.granted = sent.Add(k.session/2), sent
	return nil
}

// capped is until capped by the rebalance that waits in generation gen,
// if one does, or an error when that cap has passed.
func (k *Kafka) capped(gen int32, until time.Time) (time.Time, error) {
	k.rebalanceMu.Lock()
	at, atGen := k.rebalanceAt, k.rebalanceGen
	k.rebalanceMu.Unlock()
	if at.IsZero() || atGen != gen {
		return until, nil
	}
	c := at.Add(k.rebalanceTimeout / 2)
	if c.Before(until) {
		until = c
	}
	if !before(time.Now(), until) {
		return time.Time{}, fmt.Errorf("source: kafka group %s has waited since %s for this member to finish its batch and rejoin, half its rebalance timeout (%s): another member may soon hold the partitions",
			k.group, at.Format(time.RFC3339), k.rebalanceTimeout)
	}
	return until, nil
}

// noteRebalance records that a rebalance waits for the batch in hand
// (franz-go's OnPartitionsCallbackBlocked).
func (k *Kafka) noteRebalance(cl *kgo.Client) {
	_, gen := cl.GroupMetadata()
	k.noteRebalanceAt(time.Now(), gen)
}

// noteRebalanceAt records that a rebalance was under way at t in
// generation gen, unless one was already known for it.
func (k *Kafka) noteRebalanceAt(t time.Time, gen int32) {
	k.rebalanceMu.Lock()
	defer k.rebalanceMu.Unlock()
	if k.rebalanceAt.IsZero() || k.rebalanceGen != gen || t.Before(k.rebalanceAt) {
		k.rebalanceAt, k.rebalanceGen = t, gen
	}
}

// memberGoneError is the coordinator saying this member no longer holds
// its partitions: another member may have them now.
type memberGoneError struct {
	group, member string
	gen           int32
	why           error
}

func (e *memberGoneError) Error() string {
	if e.member == "" {
		return fmt.Sprintf("source: kafka group %s: %v: another member may hold the partitions now", e.group, e.why)
	}
	return fmt.Sprintf("source: kafka group %s no longer has member %s in generation %d (%v): another member may hold its partitions now", e.group, e.member, e.gen, e.why)
}

func (e *memberGoneError) Unwrap() error { return e.why }

// timeouts reads the session and rebalance timeouts the client joined with.
func timeouts(cl *kgo.Client) (session, rebalance time.Duration) {
	session, _ = cl.OptValue(kgo.SessionTimeout).(time.Duration)
	rebalance, _ = cl.OptValue(kgo.RebalanceTimeout).(time.Duration)
	return session, rebalance
}

// before reports whether now is before until on the monotonic clock and on
// the wall clock both (write.before says why).
func before(now, until time.Time) bool {
	return now.Before(until) && now.Round(0).Before(until.Round(0))
}
