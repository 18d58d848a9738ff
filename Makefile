GO      ?= go
PKGS    ?= ./...
# -timeout bounds a hung test well inside CI's limit.
TESTFLAGS ?= -race -shuffle=on -timeout 20m
BENCHFLAGS ?=

.PHONY: test vet fmt-check unit bench bench-micro demo redis postgres promtool pictures

## test: vet, format check and every test under -race, with real Redis servers and PostgreSQL.
test: redis postgres promtool fmt-check vet
	$(GO) test $(TESTFLAGS) $(PKGS)

## unit: the tests that need no Redis or PostgreSQL (-short skips the others).
unit:
	$(GO) test -short $(TESTFLAGS) $(PKGS)

redis:
	@scripts/ensure-redis.sh

## postgres: PostgreSQL at 127.0.0.1:5432 (database test), started or installed where missing.
postgres:
	@scripts/ensure-postgres.sh

promtool:
	@scripts/ensure-promtool.sh

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: ratelimit side by side with its peers (the bench/ module, about 8 minutes on 2 cores);
## writes docs/benchmarks.md and docs/bench/*.svg. BENCHFLAGS=-quick for a smoke run.
bench: redis postgres
	cd bench && $(GO) run . $(BENCHFLAGS)

## bench-micro: the store micro-benchmarks (run side by side; the machine is shared and noisy).
bench-micro: redis postgres
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./core/memstore ./core/redisstore ./core/pgstore

## pictures: redraws docs/pictures/*.svg (docs/algorithms.md) from runs of the memory store;
## internal/cmd/pictures' test fails when the committed ones are stale.
pictures:
	$(GO) run ./internal/cmd/pictures -out docs/pictures

## demo: the reference API under scripted traffic (see README).
demo:
	$(GO) run ./cmd/demo
