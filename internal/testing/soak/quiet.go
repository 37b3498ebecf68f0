package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/history"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest/proxy"
	"github.com/hotkeygen/hotkeygen/internal/testing/soak/model"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// How long the quiet failures last: a freeze, replies slowed, one
// instance cut off; a key's TTL and how long reads are watched after it
// ran out.
const (
	freezeFor = 3 * time.Second
	slowFor   = 2 * time.Second
	cutFor    = 2 * time.Second
	ttlFor    = time.Second
	ttlWatch  = time.Second
)

// QuietFaults are the failures that make no noise, each in a phase of its
// own: a hot key that expires by its TTL while it is read from memory,
// hot keys evicted under maxmemory, the data flushed from under the
// clients (FLUSHDB) or swapped away (SWAPDB), every reply late, one
// instance cut off while the others write, the server frozen with every
// connection open, once for seconds and then briefly again and again, and
// the server stopped politely (SHUTDOWN, SIGTERM)
// and started again. They run against one redis-server with every
// instance, and the plain writer, behind a proxy of its own.
var QuietFaults = []Fault{
	{Name: "TTL expiry", inject: expireHotKey, lasts: ttlFor + ttlWatch},
	{Name: "evicted under maxmemory", inject: evictHotKeys, lasts: 300 * time.Millisecond},
	{Name: "FLUSHDB", inject: func(ctx context.Context, r *run, l *history.Log) error {
		return r.flush(ctx, l, "FLUSHDB")
	}},
	// The data moves to db 1, and db 0 is empty: a flush, for db 0's
	// clients.
	{Name: "SWAPDB 0 1", inject: func(ctx context.Context, r *run, l *history.Log) error {
		return r.flush(ctx, l, "SWAPDB", 0, 1)
	}},
	{Name: "latency 100-300ms", inject: slowEveryReply, lasts: slowFor, proxied: true},
	{Name: "partition one instance", inject: cutOffOneInstance, lasts: cutFor, proxied: true},
	{Name: "SIGSTOP 3s", inject: freeze, lasts: freezeFor},
	{Name: "8 × SIGSTOP 150ms", inject: flap, lasts: flaps * (flapFrozen + flapThawed)},
	{Name: "SHUTDOWN NOSAVE and restart", lasts: outageFor, inject: restart(func(ctx context.Context, r *run) error {
		r.admin.Do(ctx, "SHUTDOWN", "NOSAVE") // answered by the connection's end
		return r.srv.WaitExit(5 * time.Second)
	})},
	{Name: "SIGTERM and restart", lasts: outageFor, inject: restart(func(ctx context.Context, r *run) error {
		return r.srv.Terminate()
	})},
}

// freeze stops the server's process for freezeFor (SIGSTOP, then
// SIGCONT): every connection stays open and every command waits, the
// outage that no error announces.
func freeze(ctx context.Context, r *run, _ *history.Log) error {
	from := r.now()
	if err := r.srv.Freeze(); err != nil {
		return err
	}
	sleep(ctx, freezeFor)
	err := r.srv.Thaw()
	r.record(history.Window{From: from, To: r.now()})
	return err
}

// How the server flaps: frozen flapFrozen, thawed flapThawed, flaps
// times, as a VM whose host steals its CPU, or a server stalled by its
// own work again and again.
const (
	flaps      = 8
	flapFrozen = 150 * time.Millisecond
	flapThawed = 100 * time.Millisecond
)

// flap freezes the server again and again: each freeze is an outage, in
// which hot keys are served from memory, and each thaw the moment their
// copies must stop being served within the bound of Redis answering, the
// writers writing again at once. It is where the breaker's closing, and
// how long its evidence is believed (breaker.StaleLease), are tried
// hardest.
func flap(ctx context.Context, r *run, _ *history.Log) error {
	for range flaps {
		from := r.now()
		if err := r.srv.Freeze(); err != nil {
			return err
		}
		sleep(ctx, flapFrozen)
		err := r.srv.Thaw()
		r.record(history.Window{From: from, To: r.now()})
		if err != nil || !sleep(ctx, flapThawed) {
			return err
		}
	}
	return nil
}

// slowEveryReply has every proxy delay every reply by 100 ms, then by
// 300 ms, for slowFor in all: a slow server, so that the plain writer's
// acknowledgements and the invalidations they cause come late alike (the
// plain writer is behind a proxy too). The delay is one for every
// connection at a time (proxy.Delay), changed on all of them at once, and
// it ends by going back to none and letting every reply on its way
// arrive before the proxies heal: jitter, or proxies changed one after
// another, would hand an instance an invalidation after its write was
// acknowledged elsewhere, later than any client could know of it (jitter
// of 200±100 ms measured reads 50-90 ms past the bound; proxies healed
// and slowed one by one, 110-300 ms). Redis still answers: the checker
// holds every read to the bound, and judges availability in the window
// besides.
func slowEveryReply(ctx context.Context, r *run, _ *history.Log) error {
	from := r.now()
	defer func() { r.record(history.Window{From: from, To: r.now(), Answered: true}) }()
	defer r.heal()
	delay, err := proxy.NewDelay()
	if err != nil {
		return err
	}
	for _, p := range r.proxies {
		if err := p.Follow(delay); err != nil {
			return err
		}
	}
	for _, late := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
		if err := delay.Set(late); err != nil {
			return err
		}
		if !sleep(ctx, slowFor/2) {
			return nil
		}
	}
	if err := delay.Set(0); err != nil {
		return err
	}
	sleep(ctx, 300*time.Millisecond) // the replies on their way arrive
	return nil
}

// cutOffOneInstance cuts the last instance, which only reads, off from
// Redis for cutFor, while the others and the plain writer go on writing:
// it cannot hear of their writes, so its hot reads served meanwhile are
// knowingly stale. The checker counts them, and their age, apart.
func cutOffOneInstance(ctx context.Context, r *run, _ *history.Log) error {
	inst := r.cfg.Instances - 1 // the writers are the first two instances' and the plain one
	from := r.now()
	defer func() { r.record(history.Window{From: from, To: r.now(), Partition: true, Instance: inst}) }()
	defer r.heal()
	if err := r.proxies[inst].Cut(); err != nil {
		return err
	}
	sleep(ctx, cutFor)
	return nil
}

// heal undoes what slowEveryReply and cutOffOneInstance did.
func (r *run) heal() {
	for _, p := range r.proxies {
		if err := p.Heal(); err != nil {
			slog.Warn("soak: a proxy did not heal", "err", err)
		}
	}
}

// expireHotKey writes hot key 1 with a TTL of ttlFor and keeps the other
// writers off it until ttlWatch after the TTL ran out, while readers read
// it, from memory: no read may return the version once Redis's expiry
// plus the bound has passed. The write is another program's SET PX, or,
// where only repositories' writes are heard (pubsub), a repository's
// whose entity has that TTL.
func expireHotKey(ctx context.Context, r *run, l *history.Log) error {
	if r.cfg.Hash {
		return errors.New("soak: TTL expiry is for users: a collection's TTL only moves forward")
	}
	w := writer{inst: -1, ttl: ttlFor}
	if announcedOnly(r.cfg.Mode) {
		rdb := r.connect(r.cfg.Instances)
		defer rdb.Close()
		repo := r.newStore(rdb, runtime.WithTTL(ttlFor), runtime.WithJitter(0))
		defer repo.Close()
		w.set = repo.set
	} else {
		plain := r.connect(r.cfg.Instances)
		defer plain.Close()
		w.set = plainSetter(plain, false, ttlFor)
	}
	ids := []int64{1}
	r.hold(ids)
	defer r.release(ids)
	if err := r.writeOne(ctx, l, w, 1); err != nil {
		return err
	}
	sleep(ctx, ttlFor+ttlWatch)
	return nil
}

// evictHotKeys has Redis evict hot keys as it does when memory runs out:
// maxmemory just above what it uses, allkeys-lru (to Redis, which the
// instances spare their reads, the hot keys look no more used than the
// filler), and filler written until a hot key is gone; then the limit is
// lifted, the filler deleted. The writers stay off the hot keys meanwhile, so what was
// evicted is known: a reset of those keys, for the checker. A copy of an
// evicted key is not stale (the data did not change, only Redis's cache
// of it) until the key is written again.
func evictHotKeys(ctx context.Context, r *run, _ *history.Log) error {
	ids := make([]int64, r.cfg.Keys)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	r.hold(ids)
	defer r.release(ids)
	from := r.now()
	filled, err := fillUntilEvicted(ctx, r.admin, func() (bool, error) {
		gone, err := r.missing(ctx, ids)
		return len(gone) > 0, err
	})
	gone, missingErr := r.missing(ctx, ids)
	if len(gone) > 0 {
		r.reset(from, func(id int64) bool { _, ok := gone[id]; return ok })
	}
	return errors.Join(err, missingErr, unfill(ctx, r.admin, filled))
}

// fillerKey is the key of the nth filler value.
func fillerKey(n int) string { return "soak:filler:" + strconv.Itoa(n) }

// fillUntilEvicted sets maxmemory a little above what Redis uses, with
// allkeys-lru, writes 1 KB filler values until evicted says so (5 s at
// most), and sets maxmemory and its policy back. It returns how many
// values it wrote.
func fillUntilEvicted(ctx context.Context, rdb redis.UniversalClient, evicted func() (bool, error)) (int, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	used, err := infoField(info, "used_memory")
	if err != nil {
		return 0, err
	}
	policy, err := rdb.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		return 0, err
	}
	defer func() {
		ctx := context.WithoutCancel(ctx)
		rdb.ConfigSet(ctx, "maxmemory", "0")
		rdb.ConfigSet(ctx, "maxmemory-policy", policy["maxmemory-policy"])
	}()
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		return 0, err
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", strconv.Itoa(used+256<<10)).Err(); err != nil {
		return 0, err
	}
	value := strings.Repeat("x", 1<<10)
	deadline := time.Now().Add(5 * time.Second)
	for n := 0; ; {
		pipe := rdb.Pipeline()
		for range 64 {
			pipe.Set(ctx, fillerKey(n), value, 0)
			n++
		}
		pipe.Exec(ctx) // an OOM error is possible, and harmless
		if done, err := evicted(); done || err != nil {
			return n, err
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("soak: no hot key evicted after %d filler values of 1 KB over %d bytes used", n, used)
		}
	}
}

// unfill deletes the first n filler values.
func unfill(ctx context.Context, rdb redis.UniversalClient, n int) error {
	for i := 0; i < n; i += 500 {
		var keys []string
		for j := i; j < min(n, i+500); j++ {
			keys = append(keys, fillerKey(j))
		}
		if err := rdb.Unlink(ctx, keys...).Err(); err != nil {
			return err
		}
	}
	return nil
}

// missing returns the hot keys of ids that Redis no longer holds.
func (r *run) missing(ctx context.Context, ids []int64) (map[int64]struct{}, error) {
	pipe := r.admin.Pipeline()
	exists := make([]*redis.IntCmd, len(ids))
	for i, id := range ids {
		key := model.RecordKey(id)
		if r.cfg.Hash {
			key = entryKey(id)
		}
		exists[i] = pipe.Exists(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	gone := map[int64]struct{}{}
	for i, e := range exists {
		if e.Val() == 0 {
			gone[ids[i]] = struct{}{}
		}
	}
	return gone, nil
}

// infoField returns the integer field name of an INFO reply.
func infoField(info, name string) (int, error) {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("soak: INFO has no %s", name)
}
