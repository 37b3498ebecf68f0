package userstore

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// BenchmarkGetUserHot reads one hot user through the generated repository
// from every goroutine: the path a service takes for a hot key, from typed
// id to the caller's own copy. It must allocate only that copy.
func BenchmarkGetUserHot(b *testing.B) {
	srv := redistest.Start(b)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	repo := NewUserRepo(srv.Client(b), runtime.WithHotQPS(100), runtime.WithWarmQPS(10), runtime.WithLogger(quiet))
	defer repo.Close()
	ctx := context.Background()
	if err := repo.SetUser(ctx, &User{ID: 42, Name: "Ada", Email: "ada@example.com"}); err != nil {
		b.Fatal(err)
	}
	for range 200 {
		if _, err := repo.GetUser(ctx, 42); err != nil {
			b.Fatal(err)
		}
	}
	if st := repo.Stats(); len(st.HotKeys) != 1 || st.Hits == 0 {
		b.Fatalf("user:42 is not hot: %+v", st)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := repo.GetUser(ctx, 42); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// reflectUser is User without the generated codec: msgpack decodes it by
// reflection.
type reflectUser User

// BenchmarkDecodeUser compares the generated DecodeMsgpack with msgpack's
// reflection on the bytes every Redis read of a user decodes.
func BenchmarkDecodeUser(b *testing.B) {
	data, err := msgpack.Marshal(&User{ID: 42, Name: "Ada", Email: "ada@example.com", Tags: []string{"admin", "beta"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u User
			if err := msgpack.Unmarshal(data, &u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var u reflectUser
			if err := msgpack.Unmarshal(data, &u); err != nil {
				b.Fatal(err)
			}
		}
	})
}
