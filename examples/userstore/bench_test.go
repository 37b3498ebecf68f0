package userstore

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// BenchmarkGetUserHot reads one hot user through the generated repository
// from every goroutine: the path a service takes for a hot key, from typed
// id to the caller's own copy. It must allocate only that copy.
func BenchmarkGetUserHot(b *testing.B) {
	srv := redistest.Start(b)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	repo := MustNewUserRepo(srv.Client(b), runtime.WithHotQPS(100), runtime.WithWarmQPS(10), runtime.WithLogger(quiet))
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

// BenchmarkEncodeGenerated encodes a User as the runtime does with the
// generated codec: AppendMsgpack into a buffer of the size of the last
// value (the runtime keeps that hint). Compare with BenchmarkEncodeReflect,
// the runtime's path with codec=reflect.
func BenchmarkEncodeGenerated(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		out, err := benchUser.AppendMsgpack(make([]byte, 0, 64))
		if err != nil {
			b.Fatal(err)
		}
		sinkBytes = out
	}
}

// BenchmarkEncodeReflect encodes the same value by msgpack's reflection.
func BenchmarkEncodeReflect(b *testing.B) {
	v := (*reflectUser)(benchUser)
	b.ReportAllocs()
	for b.Loop() {
		out, err := msgpack.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		sinkBytes = out
	}
}

// BenchmarkDecodeGenerated decodes a User as the runtime does with the
// generated codec: ReadMsgpack into a new value. Compare with
// BenchmarkDecodeReflect.
func BenchmarkDecodeGenerated(b *testing.B) {
	data := benchBytes(b)
	b.ReportAllocs()
	for b.Loop() {
		v := new(User)
		if err := v.ReadMsgpack(data); err != nil {
			b.Fatal(err)
		}
		sinkUser = v
	}
}

// BenchmarkDecodeReflect decodes the same bytes by msgpack's reflection.
func BenchmarkDecodeReflect(b *testing.B) {
	data := benchBytes(b)
	b.ReportAllocs()
	for b.Loop() {
		v := new(reflectUser)
		if err := msgpack.Unmarshal(data, v); err != nil {
			b.Fatal(err)
		}
		sinkReflect = v
	}
}

// benchOrder is an Order with nested Items: its codec reads and writes
// a struct inside a slice inside the entity.
var benchOrder = &Order{Tenant: "acme", Num: 7, Total: 1999, Items: []Item{{SKU: "sku-1", Qty: 3}, {SKU: "sku-2", Qty: 1}, {SKU: "sku-3", Qty: 12}}}

// BenchmarkEncodeOrderGenerated encodes an Order with the generated codec,
// as BenchmarkEncodeGenerated does a User.
func BenchmarkEncodeOrderGenerated(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		out, err := benchOrder.AppendMsgpack(make([]byte, 0, 128))
		if err != nil {
			b.Fatal(err)
		}
		sinkBytes = out
	}
}

// BenchmarkDecodeOrderGenerated decodes an Order with the generated codec,
// as BenchmarkDecodeGenerated does a User.
func BenchmarkDecodeOrderGenerated(b *testing.B) {
	data, err := msgpack.Marshal(benchOrder)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v := new(Order)
		if err := v.ReadMsgpack(data); err != nil {
			b.Fatal(err)
		}
		sinkOrder = v
	}
}

// The sinks keep what a benchmark makes reachable, so the compiler cannot
// keep it on the stack: the runtime hands every value on. They are typed,
// so assigning costs no allocation of its own.
var (
	sinkBytes   []byte
	sinkUser    *User
	sinkOrder   *Order
	sinkReflect *reflectUser
)

func benchBytes(b *testing.B) []byte {
	data, err := msgpack.Marshal(benchUser)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
