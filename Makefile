# slotd — the two commands: `make run` starts the service, `make test` runs every test.

GO      ?= go
BIN     := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)

.PHONY: run test test-ha check lint fuzz proto proto-check tools build install node promtool

## run: start slotd on 127.0.0.1:50051 with the shipped contracts, on a Postgres it finds or starts.
## The binary is built first and runs in go run's stead, so that SIGTERM and Ctrl-C reach it.
## It trusts the clients' clocks (SLOTD_CLIENT_CLOCK=window to refuse them), so that
## `slotd script run --addr` plays the shipped scripts, which run on their own clocks; and it
## creates SLOTD_DATABASE_URL's database when the server lacks it.
run: export SLOTD_CLIENT_CLOCK ?= trust
run: export SLOTD_CREATE_DATABASE ?= true
run: build
	./scripts/with-postgres.sh $(BIN)/slotd serve

## test: gofmt, go vet, generated-code drift, and every test once on real Postgres (the fuzz
## targets' seed corpora included): -race where goroutines share state (scripts/test.sh says
## which); then no database of the run may be left. The databases are named with
## SLOTD_TEST_DB_PREFIX (a prefix of the run's own when unset); a throwaway cluster, when one is
## started, listens on SLOTD_TEST_PG_PORT (55432).
test: lint proto-check node promtool
	GO=$(GO) ./scripts/with-postgres.sh ./scripts/test.sh all

## test-ha: slotd on a two-node Patroni cluster (etcd, synchronous mode) through a kill -9 of the
## leader's postmaster and a planned switchover, under load; installs patroni and etcd-server with
## apt-get when missing; under 4 minutes
test-ha:
	./scripts/test-ha.sh

## fuzz: run every fuzz target for FUZZTIME each (seed corpora live in testdata/fuzz; make test
## runs them as ordinary tests).
## A count (Nx), not a duration: a duration races Go's fuzz coordinator on a
## busy machine and fails with "context deadline exceeded" and no crasher.
FUZZTIME ?= 1000000x
FUZZ_TARGETS := ./internal/session:FuzzTurn ./internal/api:FuzzStatus ./internal/api:FuzzCodec ./contract:FuzzNormalizeArgsAndCheck \
	./contract/normalizer:FuzzNormalizeDate ./contract/normalizer:FuzzNormalizeTime ./contract/normalizer:FuzzNormalizeAmount \
	./contract/normalizer:FuzzNormalizeInteger ./contract/normalizer:FuzzNormalizeLastDigits ./contract/normalizer:FuzzNormalizeEnum \
	./contract/normalizer:FuzzNormalizeIATA ./contract/normalizer:FuzzNormalizeText ./contract/normalizer:FuzzNormalizeCurrency \
	./contract/normalizer:FuzzBlank ./internal/phrase:FuzzFill
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

## check: the edit loop: gofmt, go vet, and the tests that need no Postgres (no -race, Go's
## test cache on); make test runs everything
check: lint
	GO=$(GO) ./scripts/test.sh unit

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go' 2>/dev/null || find . -name '*.go' -not -path './examples/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## node: node and npm, which the tests of examples/node, examples/mcp/js and examples/mcp/langchain
## need; installed with apt-get when missing
node:
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
		if [ "$$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
			echo "node and npm are needed (examples/node and examples/mcp are tested): install nodejs and npm"; exit 1; fi; \
		echo "installing nodejs and npm with apt-get"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi

## promtool: .bin/promtool, which checks and unit-tests deploy/prometheus's alerting rules; taken
## from the Debian package prometheus when not on PATH, without installing the package (whose
## service would start a Prometheus server)
promtool:
	@if ! command -v promtool >/dev/null 2>&1; then \
		if ! command -v apt-get >/dev/null 2>&1; then \
			echo "promtool is needed (deploy/prometheus is tested): install prometheus"; exit 1; fi; \
		echo "extracting promtool from the prometheus package into $(BIN)"; \
		tmp=$$(mktemp -d) && cd "$$tmp" && \
		{ apt-get download -qq prometheus 2>/dev/null || \
			{ [ "$$(id -u)" -eq 0 ] && DEBIAN_FRONTEND=noninteractive apt-get update -qq && apt-get download -qq prometheus; }; } && \
		dpkg-deb -x prometheus_*.deb . && mkdir -p $(BIN) && cp usr/bin/promtool $(BIN)/ && \
		cd / && rm -rf "$$tmp"; \
	fi

## build: .bin/slotd, stamped with its commit (slotd version)
build:
	$(GO) build -buildvcs=auto -o $(BIN)/slotd ./cmd/slotd

## install: slotd into $(go env GOPATH)/bin, which go puts on PATH by its installer's advice
install:
	$(GO) install -buildvcs=auto ./cmd/slotd
	@echo "installed $$($(GO) env GOPATH)/bin/slotd"

## tools: the pinned code generators (tools/go.mod), built into .bin
TOOLS := $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-grpc-gateway $(BIN)/protoc-gen-openapiv2
tools: $(TOOLS)
$(TOOLS) &: tools/go.mod tools/go.sum
	cd tools && $(GO) build -o $(BIN)/ github.com/bufbuild/buf/cmd/buf \
		google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2

## proto: regenerate the committed Go code, the HTTP gateway and api/openapi/slotd.swagger.json from api/proto (+ api/gateway.yaml)
proto: tools
	$(BIN)/buf lint
	$(BIN)/buf generate

## proto-check: fail when the committed generated code is not what `make proto` makes
proto-check: tools
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(BIN)/buf lint && \
	$(BIN)/buf generate --output $$tmp && \
	for f in $$(cd $$tmp && find . -name '*.go' -o -name '*.swagger.json'); do \
		cmp -s $$tmp/$$f $$f || { echo "generated code is stale: $$f (run make proto)"; exit 1; }; \
	done; \
	echo "generated code is up to date"

## snapshots: rewrite contracts/snapshots from the current provider exports (review the diff, then commit it)
.PHONY: snapshots
snapshots:
	$(GO) test ./contract/provider/ -run '^TestExportSnapshots$$' -count=1 -update
