package prom_test

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/runtime/prom"
)

// Export the stats of every repository of a process on /metrics.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	users := userstore.NewUserRepo(rdb)
	defer users.Close()
	orders := userstore.NewOrderRepo(rdb)
	defer orders.Close()

	c, err := prom.NewCollector([]prom.Source{users, orders}, prom.WithHotKeyQPS())
	if err != nil {
		log.Fatal(err) // two repositories of one entity
	}
	prometheus.MustRegister(c)
	http.Handle("/metrics", promhttp.Handler())
	log.Fatal(http.ListenAndServe(":9100", nil))
}
