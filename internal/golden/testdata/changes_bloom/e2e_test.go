package catalog

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go, against the redis-server whose
// address is in REDIS_ADDR; example.com/golden/e2e connects to it.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"example.com/golden/e2e"
	"github.com/hotkeygen/hotkeygen/runtime"
	"github.com/redis/go-redis/v9"
)

// table stands in for the database: articles by id, the loads it served,
// and what the sync hook was handed.
type table struct {
	mu     sync.Mutex
	rows   map[int64]Article
	loads  []int64
	synced map[int64]*Article
}

func (d *table) load(ctx context.Context, id int64) (*Article, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.loads = append(d.loads, id)
	a, ok := d.rows[id]
	if !ok {
		return nil, runtime.ErrNotFound
	}
	return &a, nil
}

func (d *table) loadMany(ctx context.Context, ids []int64) (map[int64]*Article, error) {
	out := map[int64]*Article{}
	for _, id := range ids {
		if a, err := d.load(ctx, id); err == nil {
			out[id] = a
		}
	}
	return out, nil
}

func (d *table) hook(_ context.Context, rows map[int64]*Article) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	maps.Copy(d.synced, rows)
	return nil
}

func (d *table) set(a Article) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rows[a.ID] = a
}

func (d *table) del(id int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.rows, id)
}

func (d *table) loaded() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.loads)
}

// clean removes what an earlier run of the test left in Redis: the
// articles, the change buffer and the Bloom filter.
func clean(t *testing.T, rdb *redis.Client, ids ...int64) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "hotkeygen:*article*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		keys = append(keys, ArticleKey(id))
	}
	if err := rdb.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
}

// eventually reads until ok says the read is what the test waits for.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(e2e.Patience); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen after %v", what, e2e.Patience)
		}
	}
}

// A row changed in the database reaches Redis once it is marked; a row
// deleted there is deleted from Redis; the hook sees both.
func TestMarkedChangesReachRedis(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	clean(t, rdb, 1, 2)
	d := &table{rows: map[int64]Article{1: {ID: 1, Title: "draft", Version: 1}, 2: {ID: 2, Title: "old"}}, synced: map[int64]*Article{}}
	repo := MustNewArticleRepo(rdb, WithArticleLoader(d.load), WithArticlesLoader(d.loadMany), WithArticleSyncHook(d.hook))
	defer repo.Close()
	for _, id := range []int64{1, 2} {
		if _, err := repo.GetArticle(ctx, id); err != nil { // now in Redis
			t.Fatal(err)
		}
	}
	d.set(Article{ID: 1, Title: "published", Version: 2})
	d.del(2)
	if err := repo.MarkArticleChanged(ctx, 1, 2, 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "article 1 at version 2", func() bool {
		a, err := repo.GetArticle(ctx, 1)
		return err == nil && a.Version == 2 && a.Title == "published"
	})
	eventually(t, "article 2 deleted", func() bool {
		n, err := rdb.Exists(ctx, ArticleKey(2)).Result()
		return err == nil && n == 0
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.synced[1]; !ok || a == nil || a.Version != 2 {
		t.Errorf("the hook got article 1 as %+v (%v), want version 2", a, ok)
	}
	if a, ok := d.synced[2]; !ok || a != nil {
		t.Errorf("the hook got article 2 as %+v (%v), want nil: the row is gone", a, ok)
	}
}

// Once warmed, the filter answers reads of ids the database never had
// without the loader; ids written through the repository stay readable;
// a row the repository never saw reads as absent, as the README warns.
func TestBloomTurnsAbsentIdsAway(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	ids := []int64{10, 11, 12}
	clean(t, rdb, append(ids, 404, 500, 600)...)
	d := &table{rows: map[int64]Article{10: {ID: 10}, 11: {ID: 11}, 12: {ID: 12}}}
	repo := MustNewArticleRepo(rdb, WithArticleLoader(d.load))
	defer repo.Close()

	if _, err := repo.GetArticle(ctx, 404); !errors.Is(err, runtime.ErrNotFound) || len(d.loaded()) != 1 {
		t.Fatalf("before warming: GetArticle(404) = %v after %v loads; want ErrNotFound from the loader", err, d.loaded())
	}
	if n, err := repo.WarmArticleBloom(ctx, slices.Values(ids)); err != nil || n != len(ids) {
		t.Fatalf("WarmArticleBloom = %d, %v; want %d", n, err, len(ids))
	}
	before, was := len(d.loaded()), repo.Stats().Bloom
	for id := int64(1000); id < 1100; id++ {
		if _, err := repo.GetArticle(ctx, id); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("GetArticle(%d) = %v, want ErrNotFound", id, err)
		}
	}
	st := repo.Stats().Bloom
	checks, passed := st.Checks-was.Checks, st.Checks-was.Checks-(st.Absent-was.Absent)
	if loads := len(d.loaded()) - before; uint64(loads) != passed || checks != 100 || loads > 10 {
		t.Errorf("100 reads of absent ids cost %d loads; the filter let %d of %d through (1%% expected)", loads, passed, checks)
	}
	if a, err := repo.GetArticle(ctx, 11); err != nil || a.ID != 11 {
		t.Errorf("GetArticle(11), a warmed id: %+v, %v", a, err)
	}

	if err := repo.SetArticle(ctx, &Article{ID: 500, Title: "new"}); err != nil {
		t.Fatal(err)
	}
	d.set(Article{ID: 500, Title: "new"})
	rdb.Del(ctx, ArticleKey(500)) // as if it expired
	if a, err := repo.GetArticle(ctx, 500); err != nil || a.Title != "new" {
		t.Errorf("GetArticle(500), written through the repository, then expired: %+v, %v", a, err)
	}
	d.set(Article{ID: 600, Title: "behind its back"})
	if _, err := repo.GetArticle(ctx, 600); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("GetArticle(600), a row the repository never saw: %v, want ErrNotFound", err)
	}
}

// Keys of several fields are marked as key structs.
func TestMarkCompositeKeys(t *testing.T) {
	ctx := context.Background()
	rdb := e2e.Client(t)
	k := PriceKey{Shop: "north", SKU: "a:1"}
	if err := rdb.Del(ctx, k.String(), "hotkeygen:changes:{price}", "hotkeygen:changes:{price}:claims").Err(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	cents := int64(100)
	repo := MustNewPriceRepo(rdb, WithPricesLoader(func(_ context.Context, keys []PriceKey) (map[PriceKey]*Price, error) {
		mu.Lock()
		defer mu.Unlock()
		out := map[PriceKey]*Price{}
		for _, k := range keys {
			out[k] = &Price{Shop: k.Shop, SKU: k.SKU, Cents: cents}
		}
		return out, nil
	}))
	defer repo.Close()
	if err := repo.MarkPriceChanged(ctx, k); err != nil {
		t.Fatal(err)
	}
	// The key exists from the moment the sync takes its lease (the
	// placeholder), before the row is written: wait for the row itself.
	// Without a loader of single keys, GetPrice answers what Redis holds.
	eventually(t, "the price synced", func() bool {
		p, err := repo.GetPrice(ctx, k.Shop, k.SKU)
		return err == nil && p.Cents == 100
	})
}
