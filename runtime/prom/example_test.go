package prom_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
	"github.com/hotkeygen/hotkeygen/runtime/prom"
)

// redisAddr is the address of the redis-server the examples run against:
// in a service it is wherever Redis runs.
var redisAddr string

// exampleRedis runs the tests with a redis-server for the examples.
type exampleRedis struct{ m *testing.M }

func (e exampleRedis) Run() int { return redistest.RunWithServer(&redisAddr, e.m.Run) }

// One Collector exports every repository of a service; register it once,
// and serve the registry on /metrics.
func ExampleNewCollector() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()
	users := userstore.MustNewUserRepo(rdb)
	defer users.Close()
	orders := userstore.MustNewOrderRepo(rdb)
	defer orders.Close()

	collector, err := prom.NewCollector([]prom.Source{users, orders})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector)
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	_ = users.SetUser(ctx, &userstore.User{ID: 1, Name: "Ada"})
	for range 3 {
		_, _ = users.GetUser(ctx, 1)
	}

	families, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range families {
		if f.GetName() != "hotkeygen_reads_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			fmt.Printf("%s{%s} %v\n", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue())
		}
	}
	// Output:
	// hotkeygen_reads_total{entity=order} 0
	// hotkeygen_reads_total{entity=user} 3
}
