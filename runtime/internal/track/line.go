package track

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
)

// line is a breaker's line that its hub closes.
type line interface {
	breaker.Line
	Close() error
}

// lineOf returns the line the watcher of rdb's one node pings on: a
// subscription to nothing, on the breaker's own client of a single server
// (probe, whose connection sock records) or on rdb's, or a pingLine on a
// client that cannot subscribe to nothing (a Ring picks a shard by the
// channel's name).
func lineOf(rdb redis.UniversalClient, probe *redis.Client, sock *breaker.Socket) line {
	switch {
	case probe != nil:
		return socketLine{probe.Subscribe(context.Background()), sock}
	case isCluster(rdb):
		return rdb.Subscribe(context.Background())
	}
	return &pingLine{rdb: rdb}
}

// probeClient returns a breaker's own client of the server o reaches
// (breaker.ProbeOptions), whose connection the socket it returns
// records: the client dials nothing but its line's.
func probeClient(o *redis.Options) (*redis.Client, *breaker.Socket) {
	p, sock := breaker.ProbeOptions(o), new(breaker.Socket)
	p.Dialer = sock.Dialer(p.Dialer)
	return redis.NewClient(p), sock
}

// socketLine is a subscription to nothing whose connection sock records,
// so that the watcher checks its empty reads against the socket
// (breaker.Drainer).
type socketLine struct {
	*redis.PubSub
	sock *breaker.Socket
}

func (l socketLine) Drained() bool { return l.sock.Drained() }

func isCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}

// warmUp makes the line's connection now, to be kept: a verdict asked
// later pings on it, not on a new connection, which a server out of
// connections, or a network that drops new ones, would refuse while it
// still answers the caller's, opening the breaker on a Redis that takes
// other writers' writes.
func warmUp(ctx context.Context, l line) {
	ctx, cancel := context.WithTimeout(ctx, breaker.AnswerWithin)
	defer cancel()
	if l.Ping(ctx) == nil {
		l.ReceiveTimeout(ctx, breaker.AnswerWithin)
	}
}

// pingLine is a line over a client's own PING: each is sent, and waited
// for within breaker.AnswerWithin, as it is written, and its answer, or
// its failure, is what the next read returns. A hung node holds the
// watcher that long for each PING, where a subscription's line reads in
// windows. Only the watcher's goroutine uses it.
type pingLine struct {
	rdb     redis.UniversalClient
	answers []any // *redis.Pong or error, not read yet
}

func (l *pingLine) Ping(ctx context.Context, payload ...string) error {
	ctx, cancel := context.WithTimeout(ctx, breaker.AnswerWithin)
	defer cancel()
	if err := l.rdb.Ping(ctx).Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = breaker.NoAnswer{Waited: breaker.AnswerWithin}
		}
		l.answers = append(l.answers, err)
		return nil
	}
	pong := &redis.Pong{}
	if len(payload) > 0 {
		pong.Payload = payload[0]
	}
	l.answers = append(l.answers, pong)
	return nil
}

func (l *pingLine) ReceiveTimeout(ctx context.Context, d time.Duration) (any, error) {
	if len(l.answers) == 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, errQuiet
		}
	}
	a := l.answers[0]
	l.answers = l.answers[1:]
	if err, ok := a.(error); ok {
		return nil, err
	}
	return a, nil
}

func (l *pingLine) Close() error { return nil }

// errQuiet is a read of a pingLine that found nothing: a timeout, as a
// connection's would be.
var errQuiet error = &net.OpError{Op: "read", Net: "ping", Err: quietErr{}}

type quietErr struct{}

func (quietErr) Error() string   { return "i/o timeout" }
func (quietErr) Timeout() bool   { return true }
func (quietErr) Temporary() bool { return true }
