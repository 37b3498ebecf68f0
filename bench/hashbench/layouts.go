package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// Token is the example item: a login token of a user on a
// platform, with its own expiry.
type Token struct {
	UserID    int64
	Platform  string
	Token     string
	Status    int
	ExpiresAt time.Time
}

// owner is the collection a token belongs to.
type owner struct {
	UserID   int64
	Platform string
}

func (k owner) String() string {
	return "token:" + strconv.FormatInt(k.UserID, 10) + ":" + string(runtime.AppendKeyString(nil, k.Platform, "%:"))
}

// tokenGlue is what hotkeygen generates for
// key=token:{UserID}:{Platform} layout=hash field={Token} expires=ExpiresAt
// (with msgpack's reflection, which writes the same bytes as the
// generated codec); withExpires false drops expires=.
func tokenGlue(withExpires bool) runtime.CollectionGlue[owner, string, Token] {
	g := runtime.CollectionGlue[owner, string, Token]{
		Key:       owner.String,
		Prefix:    "token:",
		Clone:     func(v *Token) *Token { c := *v; return &c },
		Owner:     func(v *Token) owner { return owner{v.UserID, v.Platform} },
		Field:     func(v *Token) string { return v.Token },
		FieldName: func(f string) string { return string(runtime.AppendKeyString(nil, f, "%:")) },
	}
	if withExpires {
		g.Expires, g.ExpiresKey = func(v *Token) time.Time { return v.ExpiresAt }, "ExpiresAt"
	}
	return g
}

// layout is one way of storing the tokens, with the operations the
// design compares.
type layout interface {
	name() string
	// write stores tokens, of many owners.
	write(ctx context.Context, ts []*Token) error
	// read returns the number of tokens of o.
	read(ctx context.Context, o owner) (int, error)
	// logout deletes every token of o.
	logout(ctx context.Context, o owner) error
	// add stores one token.
	add(ctx context.Context, t *Token) error
}

// ttl is the tokens' lifetime: 90 days, as the ttl=2160h.
const ttl = 2160 * time.Hour

// stringLayout keeps each token under its own String key,
// token:{UserID}:{Platform}:{Token}, with its own TTL. Reading or
// deleting an owner's tokens must find their keys: SCAN MATCH, as the
// design describes it, then MGET or DEL.
type stringLayout struct{ rdb *redis.Client }

func (stringLayout) name() string { return "String per item" }

func (s stringLayout) key(t *Token) string {
	return owner{t.UserID, t.Platform}.String() + ":" + string(runtime.AppendKeyString(nil, t.Token, "%:"))
}

func (s stringLayout) write(ctx context.Context, ts []*Token) error {
	pipe := s.rdb.Pipeline()
	for _, t := range ts {
		b, err := msgpack.Marshal(t)
		if err != nil {
			return err
		}
		pipe.Set(ctx, s.key(t), b, time.Until(t.ExpiresAt))
	}
	_, err := pipe.Exec(ctx)
	return err
}

// keys finds the keys of o's tokens with SCAN MATCH over the keyspace.
func (s stringLayout) keys(ctx context.Context, o owner) ([]string, error) {
	var keys []string
	var cursor uint64
	for {
		batch, next, err := s.rdb.Scan(ctx, cursor, o.String()+":*", 1000).Result()
		if err != nil {
			return nil, err
		}
		keys = append(keys, batch...)
		if cursor = next; cursor == 0 {
			return keys, nil
		}
	}
}

func (s stringLayout) read(ctx context.Context, o owner) (int, error) {
	keys, err := s.keys(ctx, o)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	return len(vals), err
}

func (s stringLayout) logout(ctx context.Context, o owner) error {
	keys, err := s.keys(ctx, o)
	if err != nil || len(keys) == 0 {
		return err
	}
	return s.rdb.Del(ctx, keys...).Err()
}

func (s stringLayout) add(ctx context.Context, t *Token) error { return s.write(ctx, []*Token{t}) }

// hashLayout is hotkeygen's collection: one hash per owner, through
// runtime.Collection, with or without the expiry index of expires=.
type hashLayout struct {
	col     *runtime.Collection[owner, string, Token]
	expires bool
}

func (h hashLayout) name() string {
	if h.expires {
		return "Hash, expires="
	}
	return "Hash, ttl only"
}

func (h hashLayout) write(ctx context.Context, ts []*Token) error { return h.col.HSet(ctx, ts...) }

func (h hashLayout) read(ctx context.Context, o owner) (int, error) {
	m, err := h.col.HGetAll(ctx, o)
	return len(m), err
}

func (h hashLayout) logout(ctx context.Context, o owner) error { return h.col.Del(ctx, o) }

func (h hashLayout) add(ctx context.Context, t *Token) error { return h.col.HSet(ctx, t) }

// tokensOf returns the n tokens of user u, with 32-character tokens and
// expiries spread over the next 90 days.
func tokensOf(u int64, n int, now time.Time) []*Token {
	ts := make([]*Token, n)
	for i := range ts {
		ts[i] = &Token{
			UserID: u, Platform: "ios", Token: fmt.Sprintf("%032x", uint64(u)<<20|uint64(i)),
			Status: 1, ExpiresAt: now.Add(ttl - time.Duration(i)*time.Minute).Truncate(time.Millisecond),
		}
	}
	return ts
}
