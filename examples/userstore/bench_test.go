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

// benchUser is the value the codec benchmarks encode and decode: what
// every Redis read of a user decodes, and every write encodes.
var benchUser = &User{ID: 42, Name: "Ada", Email: "ada@example.com", Tags: []string{"admin", "beta"}}

// BenchmarkEncodeGenerated encodes a User through its generated
// EncodeMsgpack; compare with BenchmarkEncodeReflect.
func BenchmarkEncodeGenerated(b *testing.B) { benchEncode(b, benchUser) }

// BenchmarkEncodeReflect encodes the same value by msgpack's reflection.
func BenchmarkEncodeReflect(b *testing.B) { benchEncode(b, (*reflectUser)(benchUser)) }

// BenchmarkDecodeGenerated decodes a User through its generated
// DecodeMsgpack; compare with BenchmarkDecodeReflect.
func BenchmarkDecodeGenerated(b *testing.B) { benchDecode(b, func() any { return new(User) }) }

// BenchmarkDecodeReflect decodes the same bytes by msgpack's reflection.
func BenchmarkDecodeReflect(b *testing.B) { benchDecode(b, func() any { return new(reflectUser) }) }

func benchEncode(b *testing.B, v any) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := msgpack.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDecode(b *testing.B, fresh func() any) {
	data, err := msgpack.Marshal(benchUser)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := msgpack.Unmarshal(data, fresh()); err != nil {
			b.Fatal(err)
		}
	}
}
