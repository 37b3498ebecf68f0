module github.com/hotkeygen/hotkeygen/bench/fleetbench

go 1.26.0

replace github.com/hotkeygen/hotkeygen => ../../

require (
	github.com/hotkeygen/hotkeygen v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require (
	github.com/Yiling-J/theine-go v0.6.3 // indirect
	github.com/aymanbagabas/go-udiff v0.4.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

tool github.com/hotkeygen/hotkeygen/cmd/hotkeygen
