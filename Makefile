# slotd — the two commands: `make run` starts the service, `make test` runs every test.

GO      ?= go
BIN     := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)

.PHONY: run test check proto proto-check tools build

## run: start slotd on 127.0.0.1:50051 with the shipped contracts, on a Postgres it finds or starts
run:
	./scripts/with-postgres.sh $(GO) run ./cmd/slotd serve

## test: gofmt, go vet, generated-code drift, and every test with the race detector on real Postgres
test: check proto-check
	./scripts/with-postgres.sh $(GO) test -race -count=1 ./...

## check: gofmt and go vet
check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

build:
	$(GO) build -o $(BIN)/slotd ./cmd/slotd

## tools: the pinned code generators (tools/go.mod), built into .bin
tools: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc
$(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc: tools/go.mod tools/go.sum
	cd tools && $(GO) build -o $(BIN)/ github.com/bufbuild/buf/cmd/buf \
		google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc

## proto: regenerate the committed Go code from api/proto
proto: tools
	$(BIN)/buf lint
	$(BIN)/buf generate

## proto-check: fail when the committed generated code is not what `make proto` makes
proto-check: tools
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(BIN)/buf lint && \
	$(BIN)/buf generate --output $$tmp && \
	for f in $$(cd $$tmp && find . -name '*.go'); do \
		cmp -s $$tmp/$$f $$f || { echo "generated code is stale: $$f (run make proto)"; exit 1; }; \
	done; \
	echo "generated code is up to date"
