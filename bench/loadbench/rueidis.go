package main

import (
	"context"
	"crypto/tls"
	"math"
	"net"
	goruntime "runtime"

	"github.com/redis/rueidis"
	"github.com/vmihailenco/msgpack/v5"
)

// rueidisSystem is github.com/redis/rueidis with its client-side cache,
// as its README sets it up: RESP3 with CLIENT TRACKING (OPTIN), every read
// a DoCache of GET with a local TTL, copies dropped when Redis announces a
// write. Writes go through a second client with the same options, so they
// reach the reader's copies only through invalidation.
//
// Reads reaching Redis are counted as for every other system, on the wire:
// DialCtxFn wraps each connection in the KeyCounter, which sees the GET a
// cache miss sends (inside rueidis's MULTI with CLIENT CACHING YES and
// PTTL). A hit, or a read that waits for another goroutine's miss of the
// same key, sends nothing and counts as served locally.
type rueidisSystem struct{ r, w rueidis.Client }

func newRueidis(s Setup) (System, error) {
	conns := rueidisMultiplex()
	opt := rueidis.ClientOption{
		InitAddress:       []string{s.Addr},
		PipelineMultiplex: conns,
		CacheSizeEachConn: rueidisCacheBytes(s.Local, s.Payload, 1<<conns),
	}
	if s.Keys != nil {
		opt.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return s.Keys.Wrap(conn), nil
		}
	}
	r, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	w, err := rueidis.NewClient(opt)
	if err != nil {
		r.Close()
		return nil, err
	}
	return &rueidisSystem{r: r, w: w}, nil
}

// rueidisMultiplex is the PipelineMultiplex rueidis chooses by itself for
// one Redis (singleClientMultiplex): log2(GOMAXPROCS), at most 2, so one
// connection on one core, two on two or three, four from four. It is set
// explicitly so that the cache budget below is split over the connections
// there really are.
func rueidisMultiplex() int {
	return min(2, int(math.Log2(float64(goruntime.GOMAXPROCS(0)))))
}

// rueidisCacheBytes is the CacheSizeEachConn that holds entries GETs of
// Items with the given payload over conns connections. rueidis sizes its
// cache in bytes, and each connection caches only the keys whose slots it
// serves, so every connection gets an equal share of the entries every
// other cache gets (at least one).
//
// An entry costs what rueidis's LRU charges (lru.go, on 64-bit): its
// bookkeeping, entryBaseSize = 336 bytes, plus twice the key and the
// command name ("GET"), plus the value as a RedisMessage, 40 bytes and the
// msgpack bytes, reckoned for the longest key and version an int32 gives
// (a few bytes generous). With the default payload of 100 bytes that is
// 552 bytes, so 200 entries over two connections take 100 × 552 = 55,200
// bytes each.
func rueidisCacheBytes(entries, payload, conns int) int {
	const entryBase, messageStruct = 336, 40
	value, _ := msgpack.Marshal(&Item{ID: math.MaxInt32, Version: math.MaxInt32, Payload: string(make([]byte, payload))})
	entry := entryBase + 2*(len(ItemKey(math.MaxInt32))+len("GET")) + messageStruct + len(value)
	return max(1, (entries+conns-1)/conns) * entry
}

func (c *rueidisSystem) Get(ctx context.Context, id int64) (*Item, error) {
	b, err := c.r.DoCache(ctx, c.r.B().Get().Key(ItemKey(id)).Cache(), localTTL).AsBytes()
	if err != nil {
		return nil, err
	}
	return decodeItem(b)
}

func (c *rueidisSystem) Set(ctx context.Context, v *Item) error {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return err
	}
	return c.w.Do(ctx, c.w.B().Set().Key(ItemKey(v.ID)).Value(rueidis.BinaryString(b)).Ex(ttl).Build()).Error()
}

// Close closes both clients; rueidis's Close reports nothing.
func (c *rueidisSystem) Close() error {
	c.r.Close()
	c.w.Close()
	return nil
}
