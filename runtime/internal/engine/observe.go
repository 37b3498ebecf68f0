package engine

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Outcome is how a read was answered. Every read has one, decided where
// the read path decides it; Stats counts them (Outcomes), and an Observer
// sees the reads that left the process with theirs.
type Outcome uint8

const (
	// Local: from the local copy of a hot key, vouched for.
	Local Outcome = iota
	// Redis: Redis answered, with a value or with its absence.
	Redis
	// Loaded: Redis lacked the key and the load answered: the loader, a
	// load of another instance's waited for under the key's lease, or
	// the Bloom filter's "absent".
	Loaded
	// Stale: from a local copy no live session vouched for, because
	// Redis could not be asked (stale-while-error).
	Stale
	// FailedFast: refused with ErrUnavailable, without waiting on Redis.
	FailedFast
	// Failed: any other error.
	Failed
	// Canceled: the caller's context ended first (cancelled, or past its
	// deadline): the caller stopped waiting, nothing failed.
	Canceled
	nOutcomes
)

var outcomeNames = [nOutcomes]string{"local", "redis", "loaded", "stale", "failed_fast", "failed", "canceled"}

// String is the outcome's name in metrics and spans ("failed_fast").
func (o Outcome) String() string {
	if o < nOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// Outcomes lists every outcome, in order.
func Outcomes() []Outcome {
	return []Outcome{Local, Redis, Loaded, Stale, FailedFast, Failed, Canceled}
}

// outcome is the outcome of a read whose answer came from from and
// ended with err: an absence is an answer, not a failure, and a failure
// is the error's, wherever it came from (the read paths say Redis).
func outcome(from Outcome, err error) Outcome {
	switch {
	case err == nil || errors.Is(err, ErrNotFound):
		return from
	case errors.Is(err, ErrUnavailable):
		return FailedFast
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return Canceled
	}
	return Failed
}

// Op is the kind of a read that leaves the process.
type Op uint8

const (
	OpGet  Op = iota // Get and View: one key (GET, or HGETALL for a collection)
	OpMany           // GetMany: keys in batches
	OpItem           // a Collection's HGet: one item
	nOps
)

// Ops lists every Op, in order.
func Ops() []Op { return []Op{OpGet, OpMany, OpItem} }

// commands are the Redis commands of each Op over a layout whose read of
// one key is readOp ("get", "hgetall").
func commands(readOp string) [nOps]string {
	one, many := strings.ToUpper(readOp), strings.ToUpper(readOp)
	if one == "GET" {
		many = "MGET"
	}
	return [nOps]string{one, many, "HGET"}
}

// Observer is told of the reads and loads of each Cache made with it
// (runtime/otel's is one). New calls Observe once; Close, the
// Recorder's Close.
type Observer interface {
	Observe(Observed) Recorder
}

// Observed is what an Observer is told of a Cache.
type Observed struct {
	Entity  string
	Version int
	// Commands are the Redis commands of each Op, by Op ("GET", "MGET",
	// "HGET"; "HGETALL", "HGETALL", "HGET" for a collection).
	Commands [nOps]string
	// Stats is the Cache's Stats, for what an Observer reads when
	// asked rather than on every read.
	Stats func() Stats
}

// Recorder records one Cache's reads and loads, from many goroutines at
// once. A read served locally calls nothing but, one in LocalSample,
// Local; a read that leaves the process calls Read, and ReadEnd with
// the context Read returned; a loader's call is Load and LoadEnd
// likewise, inside the read that needed it.
type Recorder interface {
	// Local records a read served from a vouched copy: how long it took,
	// and how long before it the copy's node was last vouched for.
	Local(took, vouched time.Duration)
	Read(ctx context.Context, op Op) context.Context
	ReadEnd(ctx context.Context, op Op, o Outcome, took time.Duration, err error)
	Load(ctx context.Context) context.Context
	LoadEnd(ctx context.Context, took time.Duration, err error)
	// Close ends the recording: the Cache is closed.
	Close()
}

// LocalSample is how many reads served locally one sampled read stands
// for: the hot path reads the clock only for it.
const LocalSample = 256

// sampled reports whether a hot read with random number r is recorded:
// r's low bits, apart from the detector's high ones.
func sampled(r uint32) bool { return r%LocalSample == 0 }

// away starts a read that leaves the process: its start, and the
// context the read goes on in (a span's, with an Observer).
func (c *Cache[K, V]) away(ctx context.Context, op Op) (context.Context, time.Time) {
	if c.obs == nil {
		return ctx, time.Time{}
	}
	return c.obs.Read(ctx, op), time.Now()
}

// ended counts a read begun by away, with the outcome its answer
// (from, err) makes, and records it.
func (c *Cache[K, V]) ended(ctx context.Context, op Op, began time.Time, from Outcome, err error) {
	o := outcome(from, err)
	c.count.away[o].Add(1)
	if c.obs != nil {
		c.obs.ReadEnd(ctx, op, o, time.Since(began), err)
	}
}

// tally counts the keys of a GetMany by where their answers came from.
type tally [nOutcomes]int

// endedMany is ended for a GetMany of n keys that went to Redis: each
// key's outcome is counted, and the read's is the last of them in
// Outcome's order (stale if any key was, else loaded if any was, …), or
// its error's.
func (c *Cache[K, V]) endedMany(ctx context.Context, began time.Time, n int, from *tally, err error) {
	o := Local
	if err != nil {
		o = outcome(Redis, err)
		c.count.away[o].Add(uint64(n))
	} else {
		for i, k := range from {
			if k > 0 {
				c.count.away[i].Add(uint64(k))
				o = Outcome(i)
			}
		}
	}
	if c.obs != nil {
		c.obs.ReadEnd(ctx, OpMany, o, time.Since(began), err)
	}
}

// loaded calls a loader, f, as a Recorder's Load.
func loaded[T any](ctx context.Context, obs Recorder, f func(context.Context) (T, error)) (T, error) {
	if obs == nil {
		return f(ctx)
	}
	ctx = obs.Load(ctx)
	began := time.Now()
	v, err := f(ctx)
	obs.LoadEnd(ctx, time.Since(began), err)
	return v, err
}
