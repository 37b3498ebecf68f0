package track

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/auth"
)

// keyedSession tracks, on one RESP3 connection, only the keys this
// process keeps copies of: CLIENT TRACKING in its default mode, where the
// server remembers which keys the connection read and tells it, once,
// when one of them is written. It reads a key with EXISTS to have it
// tracked (Node.Track); the server forgets the key when it sends its
// invalidation, so a copy kept after is tracked anew. A write of a key
// no instance holds costs the server a lookup in its tracking table and
// no message, however many instances there are; a write of a held key,
// one message to each holder, and one EXISTS back from each that keeps
// it still.
//
// Tracking, invalidations and the stamped PINGs that vouch for the node
// share the one connection, so the server's order of them is the order
// the session handles them in: a key's EXISTS answer comes after every
// invalidation of it sent before, and a PING's after every invalidation
// of a write applied before it was read. Losing the connection loses
// all three at once, and the session ends.
//
// The connection is subscribed to __redis__:invalidate, on which nothing
// comes in RESP3, so that the server counts it among Pub/Sub clients as
// it did the RESP2 session: exempt from the idle timeout, and ended by
// CLIENT KILL TYPE pubsub.
//
// With key channels (KeyChannels) the same session subscribes, in place
// of EXISTS, to the channel of each key asked for (KeyChannel), on which
// the repositories announce their writes, and the confirmation of each
// subscription tracks its key. The argument is tracking's: the
// confirmation, the messages and the PINGs' answers share the connection,
// and a repository publishes on the key's master (on a cluster, the node
// that applied the write, which sends the message before it reads
// another command) before its write returns. A subscription outlives the
// messages on it: a key asked for again while its subscription stands (a
// message was handled, a write of our own moved its generation) is
// tracked again by the session's goroutine without a command (still),
// and the keys no longer held are unsubscribed every sweepEvery (sweep).
type keyedSession struct {
	w    *wire
	sock breaker.Socket
	keep keepingUp
	// rest bounds how long a reply, once begun, may take to arrive whole,
	// and a write to be taken: the client's read timeout.
	rest time.Duration
	// initial are the keys tracked as the session started; arm has them
	// counted tracked once the session is live. keys returns the keys it
	// must track (the copies kept now).
	initial []string
	keys    func() []string
	// perKey has each EXISTS ask for one key: a cluster node refuses a
	// command whose keys are in different slots.
	perKey bool
	// mu guards queued, the keys Track asked for that were not sent yet,
	// pending, those queued or sent and not answered (a key is asked once
	// until its answer), and flushing, set while a goroutine sends them.
	mu       sync.Mutex
	queued   []string
	pending  map[string]struct{}
	flushing bool
	closed   bool // no flush starts after close
	flushes  sync.WaitGroup
	// wmu orders the writes on the connection (the session's PINGs, the
	// flushes' EXISTS) and guards sent, the commands whose answers are
	// due, oldest first: the keys of an EXISTS, nil for a PING.
	wmu  sync.Mutex
	sent [][]string
	// tracker is what Node.Track calls while this session is the node's.
	tracker func(keys []string)
	end     atomic.Pointer[func()]
	follow  following
	// channels: subscribe to key channels instead of tracking. Under mu,
	// confirmed holds the keys whose subscription Redis confirmed and no
	// sweep ended (a key asked for and not confirmed yet is pending), and
	// renew those asked for again while confirmed, which the session's
	// goroutine counts tracked without asking Redis (still). swept is
	// when it last swept.
	channels  bool
	confirmed map[string]struct{}
	renew     []string
	swept     time.Time
}

// sweepEvery is how often a key-channel session unsubscribes the keys
// whose copies are no longer kept: until then each write of one still
// sends it a message.
const sweepEvery = time.Second

// keyedWithin bounds the handshake, and a reply once begun, when the
// client sets no read timeout.
const keyedWithin = 3 * time.Second

// keyed says what a keyed session tracks and checks.
type keyed struct {
	o *redis.Options
	// keys returns the keys to track: the copies kept of the node's keys
	// (of its master's, for a cluster replica).
	keys func() []string
	// follow is the caller's client, followed when it is a Sentinel
	// failover client (see following); nil on a cluster.
	follow *redis.Client
	// via, for tests, stands between Node.Track and the session.
	via func([]string, func([]string))
	// cluster: the server is a cluster node, perhaps a replica, which
	// answers reads of its master's keys after READONLY, and one slot's
	// keys per command.
	cluster bool
	// channels subscribes to key channels instead (KeyChannels).
	channels bool
}

// listener connects keyed sessions to the server k.o reaches, tracking
// k.keys at once.
func (k keyed) listener() func(context.Context) (session, error) {
	o := k.o
	return func(ctx context.Context) (session, error) {
		s := &keyedSession{pending: map[string]struct{}{}, rest: keyedWithin, keys: k.keys, perKey: k.cluster && !k.channels,
			channels: k.channels, confirmed: map[string]struct{}{}, swept: time.Now()}
		if o.ReadTimeout > 0 {
			s.rest = o.ReadTimeout
		}
		s.keep.sock = &s.sock
		dial := o.Dialer
		if dial == nil {
			dial = redis.NewDialer(o)
		}
		network := o.Network
		if network == "" {
			network = "tcp"
		}
		cn, err := s.sock.Dialer(dial)(ctx, network, o.Addr)
		if err != nil {
			return nil, err
		}
		s.w = newWire(cn)
		context.AfterFunc(ctx, func() { cn.Close() }) // interrupts a read; close waits for nothing
		// Followed from the dial on: a client's dial elsewhere during the
		// handshake ends the session as soon as it is armed.
		s.follow.start(ctx, k.follow, cn.RemoteAddr().String(), s.lost)
		if !k.channels { // a key channel's subscription is asked once armed (arm)
			s.initial = k.keys()
		}
		if err := s.handshake(ctx, o, k.cluster); err != nil {
			s.follow.stop()
			cn.Close()
			return nil, err
		}
		s.tracker = s.track
		if k.via != nil {
			s.tracker = func(keys []string) { k.via(keys, s.track) }
		}
		return s, nil
	}
}

// handshake sends, in one round trip, HELLO 3 with the client's
// credentials and name, SELECT, on a cluster READONLY, CLIENT TRACKING
// on, the subscription and EXISTS of the initial keys, and reads their
// answers; with key channels, HELLO alone. A key whose EXISTS is refused
// (a cluster node that does not serve its slot answers MOVED or ASK) is
// not tracked.
func (s *keyedSession) handshake(ctx context.Context, o *redis.Options, cluster bool) error {
	hello := []string{"HELLO", "3"}
	user, pass, err := credentials(ctx, o)
	if err != nil {
		return err
	}
	if pass != "" {
		if user == "" {
			user = "default"
		}
		hello = append(hello, "AUTH", user, pass)
	}
	if o.ClientName != "" {
		hello = append(hello, "SETNAME", o.ClientName)
	}
	cmds := [][]string{hello}
	if s.channels {
		return s.exchange(ctx, cmds)
	}
	if o.DB != 0 {
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(o.DB)})
	}
	if cluster {
		cmds = append(cmds, []string{"READONLY"})
	}
	cmds = append(cmds, []string{"CLIENT", "TRACKING", "on"}, []string{"SUBSCRIBE", "__redis__:invalidate"})
	for batch := range s.batches(s.initial) {
		cmds = append(cmds, append([]string{"EXISTS"}, batch...))
	}
	return s.exchange(ctx, cmds)
}

// exchange sends cmds in one write and reads their answers.
func (s *keyedSession) exchange(ctx context.Context, cmds [][]string) error {
	d := s.rest
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	if err := s.w.send(d, cmds...); err != nil {
		return err
	}
	for i := 0; i < len(cmds); {
		r, err := s.w.next(d, d)
		if err != nil {
			return err
		}
		if keys, flush, ok := invalidation(r); ok {
			s.untrack(keys, flush)
			continue // a push between two answers, not one
		}
		cmd := cmds[i]
		i++
		if err := r.err(); err != nil {
			if cmd[0] == "EXISTS" {
				s.untrack(cmd[1:], false)
				continue
			}
			err = fmt.Errorf("%s: %w", strings.Join(cmd[:min(len(cmd), 2)], " "), err)
			if cmd[0] == "HELLO" || cmd[0] == "CLIENT" {
				return refused(err)
			}
			return err
		}
	}
	return nil
}

// untrack drops from the initial keys those an invalidation that came
// during the handshake names, or all of them for a flush's: the server
// forgot them as it sent it, and their copies were kept before the
// session, unverified. Each is tracked anew when its next copy is kept.
func (s *keyedSession) untrack(keys []string, flush bool) {
	if flush {
		s.initial = nil
		return
	}
	s.initial = slices.DeleteFunc(s.initial, func(k string) bool { return slices.Contains(keys, k) })
}

// credentials returns the user and password the client would send, in
// go-redis's order. A streaming provider's are taken once, as the session
// connects: a token renewed later is the next session's.
func credentials(ctx context.Context, o *redis.Options) (user, pass string, err error) {
	switch {
	case o.StreamingCredentialsProvider != nil:
		creds, unsubscribe, err := o.StreamingCredentialsProvider.Subscribe(onceOnly{})
		if err != nil {
			return "", "", fmt.Errorf("credentials: %w", err)
		}
		if unsubscribe != nil {
			defer unsubscribe()
		}
		user, pass = creds.BasicAuth()
		return user, pass, nil
	case o.CredentialsProviderContext != nil:
		return o.CredentialsProviderContext(ctx)
	case o.CredentialsProvider != nil:
		user, pass = o.CredentialsProvider()
		return user, pass, nil
	}
	return o.Username, o.Password, nil
}

// onceOnly listens to a streaming credentials provider for nothing but
// its current credentials.
type onceOnly struct{}

func (onceOnly) OnNext(auth.Credentials) {}
func (onceOnly) OnError(error)           {}

// track asks for keys to be tracked, at once: a goroutine sends them
// while the session waits for Redis. Any goroutine may call it; it does
// not wait.
func (s *keyedSession) track(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if _, ok := s.pending[k]; ok {
			continue
		}
		if _, ok := s.confirmed[k]; ok {
			s.renew = append(s.renew, k)
			continue
		}
		s.pending[k] = struct{}{}
		s.queued = append(s.queued, k)
	}
	if len(s.queued) > 0 && !s.flushing && !s.closed {
		s.flushing = true
		s.flushes.Go(s.flush)
	}
}

// maxTrack is how many keys one EXISTS asks for.
const maxTrack = 512

// batches splits keys into the key lists of EXISTS or SUBSCRIBE
// commands: one key per EXISTS on a cluster node, else up to maxTrack.
func (s *keyedSession) batches(keys []string) func(yield func([]string) bool) {
	size := maxTrack
	if s.perKey {
		size = 1
	}
	return slices.Chunk(keys, size)
}

// flush sends the keys asked for until none is left. A write that fails
// closes the connection: the session ends, and with it what it tracked.
func (s *keyedSession) flush() {
	for {
		s.mu.Lock()
		keys := s.queued
		s.queued = nil
		if len(keys) == 0 {
			s.flushing = false
		}
		s.mu.Unlock()
		if len(keys) == 0 {
			return
		}
		for batch := range s.batches(keys) {
			if err := s.ask(batch); err != nil {
				s.w.cn.Close()
				return
			}
		}
	}
}

// ask asks for keys to be tracked: an EXISTS of them, answered in turn,
// or a SUBSCRIBE to their channels, each confirmed by a push.
func (s *keyedSession) ask(keys []string) error {
	if !s.channels {
		return s.send(keys, append([]string{"EXISTS"}, keys...))
	}
	cmd := make([]string, 0, 1+len(keys))
	cmd = append(cmd, "SUBSCRIBE")
	for _, k := range keys {
		cmd = append(cmd, KeyChannel(k))
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.w.send(s.rest, cmd)
}

// send writes cmd, an EXISTS of keys, or a PING when keys is nil.
func (s *keyedSession) send(keys []string, cmd []string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.sent = append(s.sent, keys)
	return s.w.send(s.rest, cmd)
}

// sweep unsubscribes the keys subscribed to whose copies are no longer
// kept and that are not being asked for. It takes the connection (wmu)
// before it lets go of mu, so that a key asked for again after it decided
// is subscribed to after the UNSUBSCRIBE: a confirmation the UNSUBSCRIBE
// could undo never comes. Track, which only takes mu, does not wait for
// the write.
func (s *keyedSession) sweep() error {
	s.swept = time.Now()
	held := s.keys()
	s.mu.Lock()
	cmd := []string{"UNSUBSCRIBE"}
	for k := range s.confirmed {
		if !slices.Contains(held, k) {
			delete(s.confirmed, k)
			cmd = append(cmd, KeyChannel(k))
		}
	}
	if len(cmd) == 1 {
		s.mu.Unlock()
		return nil
	}
	s.wmu.Lock()
	s.mu.Unlock()
	defer s.wmu.Unlock()
	return s.w.send(s.rest, cmd)
}

// answered returns the keys of the oldest command not answered yet: an
// EXISTS's, or nil for a PING's.
func (s *keyedSession) answered() ([]string, bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(s.sent) == 0 {
		return nil, false
	}
	keys := s.sent[0]
	s.sent = s.sent[1:]
	return keys, true
}

// Ping writes a stamped PING (keepingUp.ping).
func (s *keyedSession) Ping(_ context.Context, payload ...string) error {
	return s.send(nil, append([]string{"PING"}, payload...))
}

func (s *keyedSession) arm(end func(), v voucher) {
	s.end.Store(&end)
	if s.follow.moved.Load() { // lost came before end was stored
		end()
	}
	s.keep.v = &v
	v.n.tracker.Store(&s.tracker)
	if len(s.initial) > 0 && v.tracked != nil {
		v.tracked(s.initial)
	}
	// A copy kept since keys was read, whose Track found no session.
	var late []string
	for _, k := range s.keys() {
		if !slices.Contains(s.initial, k) {
			late = append(late, k)
		}
	}
	if len(late) > 0 {
		s.track(late)
	}
}

// lost ends the session's coverage at once: following saw the client
// dial another server.
func (s *keyedSession) lost() {
	if end := s.end.Load(); end != nil {
		(*end)()
	}
	s.w.cn.Close() // next returns
}

func (s *keyedSession) next(ctx context.Context) ([]string, bool, error) {
	if err := s.keep.ping(ctx, s); err != nil {
		return nil, false, err
	}
	if s.channels {
		s.still()
		if time.Since(s.swept) >= sweepEvery {
			if err := s.sweep(); err != nil {
				return nil, false, err
			}
		}
	}
	d := s.keep.window()
	asked := s.keep.asked(d)
	r, err := s.w.next(d, s.rest)
	if s.follow.moved.Load() {
		return nil, false, errMoved
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout() && s.w.r.Buffered() == 0:
		s.keep.quiet(asked)
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	if keys, flush, ok := invalidation(r); ok {
		s.retrack(keys, flush)
		return keys, flush, nil
	}
	if r.kind == '>' {
		return s.pushed(r), false, nil
	}
	keys, ok := s.answered()
	switch {
	case !ok:
		return nil, false, fmt.Errorf("%w: an answer to no command", errWire)
	case keys == nil && r.err() != nil:
		return nil, false, r.err()
	case keys == nil:
		s.keep.pong(r.str)
		return nil, false, nil
	}
	s.mu.Lock()
	for _, k := range keys {
		delete(s.pending, k)
	}
	s.mu.Unlock()
	// An EXISTS refused (MOVED or ASK from a cluster node that does not
	// serve the slot now) tracks nothing: the key's copies stay
	// unverified, and the next one asks again, of the node the topology
	// then names.
	v := s.keep.v
	switch {
	case v == nil:
	case r.kind == ':' && v.tracked != nil:
		v.tracked(keys)
	case r.kind == '-' && v.redirected != nil && (strings.HasPrefix(r.str, "MOVED ") || strings.HasPrefix(r.str, "ASK ")):
		v.redirected()
	}
	return nil, false, nil
}

// pushed handles a push that is no invalidation: on a key channel, a
// message, whose key it returns, or a subscription's confirmation, which
// tracks its key; anything else is the subscription's, and ignored.
func (s *keyedSession) pushed(r reply) []string {
	if len(r.elems) != 3 {
		return nil
	}
	key, ok := strings.CutPrefix(r.elems[1].str, keyChannelPrefix)
	if !ok {
		return nil
	}
	switch r.elems[0].str {
	case "message":
		return []string{key}
	case "subscribe":
		s.mu.Lock()
		_, asked := s.pending[key]
		delete(s.pending, key)
		if asked {
			s.confirmed[key] = struct{}{}
		}
		s.mu.Unlock()
		if v := s.keep.v; asked && v != nil && v.tracked != nil {
			v.tracked([]string{key})
		}
	}
	return nil
}

// still counts tracked from now on the keys asked for again while their
// subscription stood, those it still does: each message of one sent
// before was handled (the hub handles a message before it asks for the
// next), and each sent after will be. Only the session's goroutine
// sweeps, so no UNSUBSCRIBE goes out in between.
func (s *keyedSession) still() {
	s.mu.Lock()
	keys := slices.DeleteFunc(s.renew, func(k string) bool { _, ok := s.confirmed[k]; return !ok })
	s.renew = nil
	s.mu.Unlock()
	if len(keys) > 0 && s.keep.v != nil && s.keep.v.tracked != nil {
		s.keep.v.tracked(keys)
	}
}

// retrack has a cluster replica's session track again the keys it was
// told of: a replica tracks its master's held keys for the promotion that
// may come, and forgets each as it sends its invalidation, which it sends
// when it applies the replicated write, after the master's. Asked again
// only when the master's invalidation was handled (Node.Track from the
// copy's next keep), its EXISTS could come after the master's answer, and
// the copy be verified while the replica tracks nothing.
func (s *keyedSession) retrack(keys []string, flush bool) {
	if v := s.keep.v; v == nil || v.n.master.Load() == nil {
		return
	}
	if flush {
		keys = s.keys()
	}
	s.track(keys)
}

// invalidation returns the keys an invalidation push names, or flush for
// the null one FLUSHALL and FLUSHDB send; ok is false for any other reply
// or push (the subscription's).
func invalidation(r reply) (keys []string, flush, ok bool) {
	if r.kind != '>' || len(r.elems) != 2 || r.elems[0].str != "invalidate" {
		return nil, false, false
	}
	named := r.elems[1]
	if named.null {
		return nil, true, true
	}
	keys = make([]string, 0, len(named.elems))
	for _, k := range named.elems {
		keys = append(keys, k.str)
	}
	return keys, false, true
}

func (s *keyedSession) close() {
	if s.keep.v != nil {
		s.keep.v.n.tracker.CompareAndSwap(&s.tracker, nil)
	}
	s.follow.stop()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.w.cn.Close()
	s.flushes.Wait()
}
