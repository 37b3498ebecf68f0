package soak

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/internal/testing/soak/model"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// database is the source of truth of a run with Config.Database: each
// record's version, which writers update before they delete or set the
// record's key, as a service does after its database commits, and which
// the repositories' loaders read. Its reads are slow, and a tenth of them
// very slow, so that loads are in flight while writers update and delete.
type database struct {
	mu   sync.Mutex
	rows map[int64]int64
}

// The time a load takes: loadFast at most, or loadSlow one time in ten,
// the cache-aside race's window (issue 49: a 150 ms load, the update 40 ms
// into it).
const (
	loadFast = 5 * time.Millisecond
	loadSlow = 150 * time.Millisecond
)

func newDatabase() *database { return &database{rows: map[int64]int64{}} }

// update commits version as id's row.
func (db *database) update(id, version int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.rows[id] = version
}

// load is a repository's loader: it reads id's row, then takes the rest
// of the load's time, as a query whose answer is on its way back.
func (db *database) load(ctx context.Context, id int64) (*model.Record, error) {
	db.mu.Lock()
	version, ok := db.rows[id]
	db.mu.Unlock()
	d := rand.N(loadFast)
	if rand.IntN(10) == 0 {
		d = loadSlow
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if !ok {
		return nil, runtime.ErrNotFound
	}
	return &model.Record{ID: id, Version: version}, nil
}

// dbWriter writes as a service does through repo: it updates the
// database, then deletes the key (even versions) or sets the new row
// (odd ones) through the repository.
func (db *database) writer(repo store) func(ctx context.Context, id, version int64) error {
	recs := repo.(records)
	return func(ctx context.Context, id, version int64) error {
		db.update(id, version)
		if version%2 == 0 {
			return recs.DelRecord(ctx, id)
		}
		return recs.SetRecord(ctx, &model.Record{ID: id, Version: version})
	}
}

// deleter writes as another program does: it updates the database, then
// deletes the key with a plain DEL.
func (db *database) deleter(rdb redis.UniversalClient) func(ctx context.Context, id, version int64) error {
	return func(ctx context.Context, id, version int64) error {
		db.update(id, version)
		return rdb.Del(ctx, model.RecordKey(id)).Err()
	}
}
