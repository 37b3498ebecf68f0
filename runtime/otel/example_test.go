package otel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	hotkeyotel "github.com/hotkeygen/hotkeygen/runtime/otel"
)

// redisAddr is the address of the redis-server the examples run against:
// in a service it is wherever Redis runs.
var redisAddr string

// exampleRedis runs the tests with a redis-server for the examples.
type exampleRedis struct{ m *testing.M }

func (e exampleRedis) Run() int { return redistest.RunWithServer(&redisAddr, e.m.Run) }

// Instrument is one option of a repository. Without WithMeterProvider and
// WithTracerProvider it reports to the global providers, which a service
// sets up once (otel.SetMeterProvider, otel.SetTracerProvider); here an
// SDK meter provider is read by hand.
func ExampleInstrument() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()

	users := userstore.MustNewUserRepo(rdb, hotkeyotel.Instrument(hotkeyotel.WithMeterProvider(mp)))
	defer users.Close()
	if err := users.SetUser(ctx, &userstore.User{ID: 7, Name: "Ada"}); err != nil {
		fmt.Println(err)
		return
	}
	u, err := users.GetUser(ctx, 7)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Name)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != "hotkey.reads" {
			continue
		}
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			if p.Value > 0 {
				outcome, _ := p.Attributes.Value("hotkey.read.outcome")
				entity, _ := p.Attributes.Value("hotkey.entity")
				fmt.Printf("%s{hotkey.entity=%s, hotkey.read.outcome=%s} %d\n", m.Name, entity.Emit(), outcome.Emit(), p.Value)
			}
		}
	}
	// Output:
	// Ada
	// hotkey.reads{hotkey.entity=user, hotkey.read.outcome=redis} 1
}
