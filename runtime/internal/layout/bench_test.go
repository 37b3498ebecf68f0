package layout

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/internal/send"
)

// wall is the wall clock: the server judges field expiries by its own.
type wall struct{}

func (wall) Now() time.Time { return time.Now() }

// The forms a collection with expires= can take, compared on one server
// (BENCHMARKS.md, "Hash field expiry"): the write script, which finds
// and deletes expired items itself, and the native form, where the server
// expires each item's field. The native sub-benchmarks need a server that
// expires hash fields (HOTKEYGEN_SERVER=redis-8.0) and skip, saying so,
// on one that does not.
//
//   - write: one item of an owner's ten written again (a token renewed),
//     lifetime an hour;
//   - read: HGETALL of an owner's ten items, none expired; B/owner is
//     MEMORY USAGE of an owner's hash, averaged;
//   - mixed: nine reads of a random owner to one write of a random
//     owner's token, which lives 50–500 ms: expired-% is the share of
//     reads whose reply held an item expired before the read was sent,
//     which only the client's filter (Collection's reads leave such
//     items out) keeps from the caller.
func BenchmarkHashForms(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	native, err := FieldExpiry(ctx, rdb)
	if err != nil {
		b.Fatal(err)
	}
	const owners, items = 1000, 10
	for _, f := range []struct {
		name string
		form int32
	}{{"script", formScript}, {"native", formNative}} {
		newHash := func(b *testing.B) *Hash {
			if f.form == formNative && !native {
				b.Skip("this server does not expire hash fields; run with HOTKEYGEN_SERVER=redis-8.0")
			}
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			h := NewHash(wall{}, false, "ExpiresAt", false, nil)
			h.form.Store(f.form)
			return h
		}
		fill := func(b *testing.B, h *Hash, life time.Duration) {
			for o := range owners {
				its := make([]Item, items)
				for i := range its {
					its[i] = token(b, time.Now().Add(life), i)
				}
				if err := h.Run(ctx, rdb, h.SetItems(ownerKey(o), its, time.Hour)).Err(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run("write/"+f.name, func(b *testing.B) {
			h := newHash(b)
			fill(b, h, time.Hour)
			n := 0
			for b.Loop() {
				it := token(b, time.Now().Add(time.Hour), n%items)
				if err := h.Run(ctx, rdb, h.SetItems(ownerKey(n/items%owners), []Item{it}, time.Hour)).Err(); err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
		b.Run("read/"+f.name, func(b *testing.B) {
			h := newHash(b)
			fill(b, h, time.Hour)
			var bytes int64
			for o := range owners {
				bytes += rdb.MemoryUsage(ctx, ownerKey(o)).Val()
			}
			n := 0
			for b.Loop() {
				if _, _, err := h.Read(ctx, send.Pool{Client: rdb}, ownerKey(n%owners), true); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(bytes)/owners, "B/owner")
		})
		b.Run("mixed/"+f.name, func(b *testing.B) {
			h := newHash(b)
			fill(b, h, 500*time.Millisecond)
			var reads, expired int
			for b.Loop() {
				o := ownerKey(rand.IntN(owners))
				if rand.IntN(10) == 0 {
					life := 50*time.Millisecond + rand.N(450*time.Millisecond)
					if err := h.Run(ctx, rdb, h.SetItems(o, []Item{token(b, time.Now().Add(life), rand.IntN(items))}, time.Hour)).Err(); err != nil {
						b.Fatal(err)
					}
					continue
				}
				sent := time.Now().UnixMilli()
				m, err := rdb.HGetAll(ctx, o).Result()
				if err != nil {
					b.Fatal(err)
				}
				reads++
				for _, v := range m {
					var t struct{ ExpiresAt time.Time }
					if msgpack.Unmarshal([]byte(v), &t) == nil && t.ExpiresAt.UnixMilli() < sent {
						expired++
						break
					}
				}
			}
			b.ReportMetric(100*float64(expired)/float64(max(reads, 1)), "expired-%")
		})
	}
}

// token is item i of an owner, a login token expiring at exp.
func token(b *testing.B, exp time.Time, i int) Item {
	v, err := msgpack.Marshal(map[string]any{"Token": strings.Repeat("t", 64), "ExpiresAt": exp})
	if err != nil {
		b.Fatal(err)
	}
	return Item{Field: strconv.Itoa(i), Value: v, Exp: exp.UnixMilli()}
}

func ownerKey(o int) string { return "owner:" + strconv.Itoa(o) }
