GO ?= go

.PHONY: test vet bench

# test runs everything CI runs: formatting, vet, and every test under the
# race detector, including those against a real redis-server.
test: vet
	$(GO) test -race -count=1 ./...

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# bench runs the runtime benchmarks that BENCHMARKS.md reports.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=5 ./runtime
