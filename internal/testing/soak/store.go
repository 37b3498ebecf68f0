package soak

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/soak/model"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// store is the entity a run reads and writes through one instance: users,
// a String each, or collections in a Redis hash (Config.Hash), whose one
// item carries the version. A read of an absent key returns an error
// wrapping runtime.ErrNotFound.
type store interface {
	get(ctx context.Context, id int64) (version int64, err error)
	set(ctx context.Context, id, version int64) error
	Close() error
}

// records is a store of the checker's records.
type records struct{ *model.RecordRepo }

// lent alternates the reads of records between GetRecord and ViewRecord,
// which takes the same path but lends the held copy instead of copying it,
// so the checker judges both under every fault.
var lent atomic.Uint64

func (r records) get(ctx context.Context, id int64) (int64, error) {
	if lent.Add(1)%2 == 0 {
		var version int64
		err := r.ViewRecord(ctx, id, func(v *model.Record) error { version = v.Version; return nil })
		return version, err
	}
	v, err := r.GetRecord(ctx, id)
	if err != nil {
		return 0, err
	}
	return v.Version, nil
}

func (r records) set(ctx context.Context, id, version int64) error {
	return r.SetRecord(ctx, &model.Record{ID: id, Version: version})
}

// entry is the item of a collection under test: owner's item "v".
type entry struct {
	Owner   int64
	Field   string
	Version int64
}

// entryField is the one item a collection holds.
const entryField = "v"

func entryKey(owner int64) string { return "soakset:" + strconv.FormatInt(owner, 10) }

// collections is a store of collections, through runtime.Collection
// with the glue hotkeygen generates for
// key=soakset:{Owner} layout=hash field={Field}.
type collections struct {
	*runtime.Collection[int64, string, entry]
}

func newCollections(rdb redis.UniversalClient, opts ...runtime.Option) collections {
	return collections{runtime.MustNewCollection(rdb, runtime.CollectionGlue[int64, string, entry]{
		Key:       entryKey,
		Prefix:    "soakset:",
		Clone:     func(e *entry) *entry { c := *e; return &c },
		Owner:     func(e *entry) int64 { return e.Owner },
		Field:     func(e *entry) string { return e.Field },
		FieldName: func(f string) string { return string(runtime.AppendKeyString(nil, f, "%:")) },
	}, append([]runtime.Option{runtime.WithEntity("soakset")}, opts...)...)}
}

func (c collections) get(ctx context.Context, id int64) (int64, error) {
	m, err := c.HGetAll(ctx, id)
	if err != nil {
		return 0, err
	}
	if e := m[entryField]; e != nil {
		return e.Version, nil
	}
	return 0, fmt.Errorf("%s has no item %q: %w", entryKey(id), entryField, runtime.ErrNotFound)
}

func (c collections) set(ctx context.Context, id, version int64) error {
	return c.HSet(ctx, &entry{Owner: id, Field: entryField, Version: version})
}

// plainSetter writes as another program would: a plain SET of the
// generated codec's bytes for users, with an expiry of ttl unless 0, a
// plain HSET of the item's msgpack for collections (which take no ttl).
func plainSetter(rdb redis.UniversalClient, hash bool, ttl time.Duration) func(ctx context.Context, id, version int64) error {
	if hash {
		return func(ctx context.Context, id, version int64) error {
			b, err := msgpack.Marshal(&entry{Owner: id, Field: entryField, Version: version})
			if err != nil {
				return err
			}
			return rdb.HSet(ctx, entryKey(id), entryField, b).Err()
		}
	}
	return func(ctx context.Context, id, version int64) error {
		return plainSet(ctx, rdb, &model.Record{ID: id, Version: version}, ttl)
	}
}

// plainSet writes rec as another program would: the generated codec's
// bytes with a plain SET, expiring after ttl unless 0.
func plainSet(ctx context.Context, rdb redis.Cmdable, rec *model.Record, ttl time.Duration) error {
	b, err := rec.AppendMsgpack(nil)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, model.RecordKey(rec.ID), b, ttl).Err()
}
