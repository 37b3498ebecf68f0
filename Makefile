GO ?= go

.PHONY: test test-checker test-servers matrix servers vet check generate bench demo loadbench fleetbench fuzz soak mutate

# test runs everything CI runs: formatting, vet, generated files being
# fresh, and every test under the race detector, including those against
# a real redis-server. The timeout finds a hung test, not a slow one:
# internal/golden compiles every golden case into one module, which on a
# fresh machine's empty build cache, loaded, took more than go test's
# default 10 minutes. -trimpath keeps the checkout's directory out of the
# build cache's keys, so a fresh clone compiles only the packages that
# differ from the last build, not the whole module again.
#
# Then two jobs side by side, as make matrix runs its servers: the history
# checker on the default server (test-checker) and the servers of MATRIX
# one after another (test-servers). Each uses about one core of two;
# --output-sync prints each job's output whole once it ends.
#
# HOTKEYGEN_SERVER chooses the server every test starts (see
# internal/testing/redistest): the system's redis-server by default, or one that
# scripts/servers builds. With the default, test then checks the core
# promises on every server of MATRIX too.
test: export GOFLAGS += -trimpath
test: vet check
	$(GO) test -race -count=1 -timeout 25m $$($(GO) list ./... | grep -v /internal/testing/soak)
	$(MAKE) --no-print-directory -j2 --output-sync=target test-checker test-servers

# test-checker runs the fault-injection checker (internal/testing/soak) without
# the race detector: it measures staleness in milliseconds, and the race
# detector's instrumentation slows every goroutine several times; its
# packages' logic is raced in the runtime's own tests. make test's longer
# runs on the default server replace TestCorePromises, the matrix's. Then
# loadbench's own tests.
test-checker:
	$(GO) test -count=1 -skip '^TestCorePromises$$' ./internal/testing/soak/...
	cd bench/loadbench && $(GO) vet -tags hotkeygen_bench ./... && $(GO) test -tags hotkeygen_bench -race -count=1 ./...
	cd bench/fleetbench && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# test-servers is make matrix one server at a time, beside test-checker;
# nothing when HOTKEYGEN_SERVER chose one server for the whole run.
test-servers:
	@if [ -z "$$HOTKEYGEN_SERVER" ]; then scripts/servers $(MATRIX) && MATRIX_JOBS=1 GO=$(GO) scripts/matrix $(MATRIX); fi

# matrix checks the core promises on each server of MATRIX, built by
# scripts/servers, the servers side by side (scripts/matrix): the history
# checker (TestCorePromises: every fault kind, tracking and Pub/Sub,
# collections, a cluster's topology changes), the runtime's tests of
# MATRIX_RUNTIME (collections, the change buffer, invalidation, expiry,
# failovers) and the internal packages whose tests start a server.
# MATRIX_JOBS runs that many servers at a time (all, by default).
MATRIX ?= redis-8.0 valkey-8.1
export MATRIX_RUNTIME = ^Test.*(Collection|HSet|HGet|HDel|Change|Sync|Mark|Tracking|PubSub|Invalidat|Expir|Lease|ColdKeyOnce|WinsOverTheLoad|EveryReadKind|WaitersOf).*$$
matrix: servers
	GO=$(GO) scripts/matrix $(MATRIX)

# servers builds the servers of MATRIX into ~/.cache/hotkeygen/servers
# (HOTKEYGEN_SERVERS), once: Debian's source packages, built here.
servers:
	scripts/servers $(MATRIX)

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# check fails when a generated file is stale, missing or superfluous.
check:
	$(GO) run ./cmd/hotkeygen -check ./...
	cd bench/loadbench && $(GO) run github.com/hotkeygen/hotkeygen/cmd/hotkeygen -check ./...
	cd bench/fleetbench && $(GO) run github.com/hotkeygen/hotkeygen/cmd/hotkeygen -check ./...

generate:
	$(GO) generate ./...

# bench runs the benchmarks that BENCHMARKS.md reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=5 ./runtime/... ./examples/userstore

# fuzz runs every fuzz target of the repository (both modules), one at a
# time, each for FUZZTIME; targets are found with go test -list, so new ones
# join by themselves. make test runs only their seed corpora.
FUZZTIME ?= 30s
fuzz:
	@set -e; for dir in $$($(GO) list -f '{{.Dir}}' ./...) $$(cd bench/loadbench && $(GO) list -f '{{.Dir}}' ./...); do \
		grep -qs '^func Fuzz' $$dir/*_test.go || continue; \
		for target in $$(cd $$dir && $(GO) test -list '^Fuzz' . | grep '^Fuzz'); do \
			echo "fuzz: $$target in $$dir for $(FUZZTIME)"; \
			(cd $$dir && $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) .); \
		done; \
	done
	@echo "fuzz: the golden cases' targets (internal/golden/testdata/*/), in the module internal/golden builds"
	$(GO) test -count=1 -timeout 0 -run '^TestGeneratedCodeBuildsAndRuns$$' ./internal/golden -v -fuzztime-generated $(FUZZTIME)


# mutate runs mutation testing (gremlins, every operator it has that
# applies) over the freshness protocol, the breaker and the transport
# (MUTATE_PKGS, every file of each), and over MUTATE_FILES of runtime/
# when it names some, with the tests of
# MUTATE_TESTS, the runtime's tests that guard them, and each package's
# own tests: a mutant a test fails on is killed, one every test passes
# lived. Each run of the tests takes about 35 s; with MUTATE_WORKERS at 3
# the runtime's files take about 40 minutes. The runtime's tests guard a
# package not their own, so a mutant of MUTATE_PKGS is tested in
# gremlins' integration mode, the same -run over go test ./..., and its
# coverage is of the package (--coverpkg). That go test runs in a copy of
# the module cut down to the packages the runtime's tests build (go list
# -deps -test ./runtime/..., and proxyd, which their proxies build), so that a mutant does not build every test
# binary of the module (the examples', the soak's, the benchmarks'): a
# few mutants a minute, not one. The reports are mutate.json and
# mutate-<package>.json; the last is in RELIABILITY.md ("Mutation
# testing").
MODULE = github.com/hotkeygen/hotkeygen
MUTATE_FILES ?=
MUTATE_PKGS ?= runtime/internal/fresh runtime/internal/breaker runtime/internal/track runtime/internal/lease
MUTATE_TESTS ?= freshness quiet invalidate stats_health expiry protect sentinel flight load errors cluster refresh collection close lease readkinds
MUTATE_WORKERS ?= 3
GREMLINS ?= github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
MUTATE_OPS = --workers $(MUTATE_WORKERS) --timeout-coefficient 3 --invert-logical --invert-loopctrl --remove-self-assignments
mutate:
	@tests=$$(for f in $(MUTATE_TESTS); do sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' runtime/$${f}_test.go; done | paste -sd'|'); \
	if [ -n "$(MUTATE_FILES)" ]; then \
		skip=$$(cd runtime && ls *.go | grep -v _test.go | grep -vxF $(patsubst %,-e %,$(MUTATE_FILES)) | sed 's/^/-E ^/; s/$$/$$/'); \
		GOFLAGS="-run=^($$tests)$$" $(GO) run $(GREMLINS) unleash $(MUTATE_OPS) \
			$$skip -E / $(MUTATE_FLAGS) -o mutate.json ./runtime || exit 1; \
	fi; \
	tree=$$(mktemp -d) && trap 'rm -rf "$$tree"' EXIT && cp go.mod go.sum "$$tree" && \
	for p in $$($(GO) list -deps -test ./runtime/... ./internal/testing/redistest/proxy/proxyd | grep '^$(MODULE)/' | grep -v -e '\.test$$' -e ' '); do \
		d=$${p#$(MODULE)/}; mkdir -p "$$tree/$$d"; find "$$d" -maxdepth 1 -type f -exec cp {} "$$tree/$$d/" \; ; \
		if [ -d "$$d/testdata" ]; then cp -r "$$d/testdata" "$$tree/$$d/"; fi; \
	done; \
	for pkg in $(MUTATE_PKGS); do \
		own=$$(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' $$pkg/*_test.go 2>/dev/null | paste -sd'|'); \
		(cd "$$tree" && GOFLAGS="-run=^($$tests|$$own)$$" $(GO) run $(GREMLINS) unleash $(MUTATE_OPS) \
			--integration --coverpkg ./$$pkg $(MUTATE_FLAGS) -o $(CURDIR)/mutate-$$(basename $$pkg).json ./$$pkg) || exit 1; \
	done

# demo runs the userstore example under a skewed load with a flash crowd,
# serves the live page on http://127.0.0.1:8080/debug/hotkeys/ and runs
# until Ctrl-C; it uses REDIS_ADDR when set and an embedded Redis
# otherwise, and keeps its rows in the PostgreSQL at DATABASE_URL when set
# and in SQLite in memory otherwise. DEMO_FLAGS passes flags, e.g. DEMO_FLAGS='-duration 30s' to
# stop by itself, or DEMO_FLAGS="-http ''" to serve no page.
# -v names each package as it is compiled: a first run on a busy machine
# compiles for minutes, and says so.
DEMO_FLAGS ?=
demo:
	@echo "demo: building the example service (a first build compiles the dependencies: a minute or more; each package is named as it is compiled)"
	$(GO) build -v -o $(DEMO_BIN) ./examples/userstore/demo
	@echo "demo: running it; Ctrl-C stops it"
	$(DEMO_BIN) $(DEMO_FLAGS)
DEMO_BIN ?= $(or $(TMPDIR),/tmp)/hotkeygen-demo

# loadbench drives the same workloads through hotkeygen and its peers
# against a redis-server it starts, prints one table and writes it to
# bench/loadbench/results/latest.{csv,json,md}; it takes about ten minutes.
# LOADBENCH_FLAGS passes flags, e.g. LOADBENCH_FLAGS='-duration 1s -keys 2000'.
LOADBENCH_FLAGS ?=
loadbench:
	cd bench/loadbench && $(GO) run -tags hotkeygen_bench . $(LOADBENCH_FLAGS)

# fleetbench measures what N instances of hotkeygen and its peers
# (rueidis's and go-redis's client-side caches, plain go-redis) cost one
# Redis node, read from INFO at the node: idle with no copy, idle holding
# copies, and while another client writes keys nobody holds or keys they
# hold. It starts its own redis-server (a 3-master cluster with
# FLEETBENCH_FLAGS='-topology cluster'), prints one table and writes
# bench/fleetbench/results/latest.{md,csv,json} and fleet.svg.
# FLEETBENCH_FLAGS passes flags, e.g. FLEETBENCH_FLAGS='-n 1,8 -window 3s'.
FLEETBENCH_FLAGS ?=
fleetbench:
	cd bench/fleetbench && $(GO) run . $(FLEETBENCH_FLAGS)

# soak runs the fault-injection history checker for SOAK (default 10m)
# on each server of SOAK_SERVERS in turn (the default's, then MATRIX's),
# shared by the three invalidation modes with paced and saturating
# readers, and prints a table per mode and fault (see RELIABILITY.md).
# SOAK_FLAGS passes flags, e.g. SOAK_FLAGS='-only cluster'.
SOAK ?= 10m
SOAK_FLAGS ?=
SOAK_SERVERS ?= $(if $(HOTKEYGEN_SERVER),$(HOTKEYGEN_SERVER),system $(MATRIX))
soak: servers
	@set -e; for s in $(SOAK_SERVERS); do \
		echo "soak: $$s"; \
		HOTKEYGEN_SERVER=$$s $(GO) run ./internal/testing/soak/cmd/soak -duration $(SOAK) $(SOAK_FLAGS); \
	done
