# podvisor — the two commands a newcomer needs are `make run` and `make test`.
# Both set up what they need themselves.

GO        ?= go
BIN       := bin/podvisor
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
EXAMPLE   ?= examples/quickstart/procs.yaml
FUZZTIME  ?= 10s
# Debian packages the tests use: promtool (prometheus) checks /metrics,
# unshare (util-linux) runs PID-1 tests, python3 serves the quickstart example.
TEST_DEBS := prometheus util-linux python3 procps

.PHONY: all build run test test-short lint bench fuzz deps clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/podvisor

# Runs podvisor on the quickstart example in the foreground until Ctrl-C.
run: build
	$(BIN) check -c $(EXAMPLE)
	$(BIN) graph -c $(EXAMPLE)
	$(BIN) run -c $(EXAMPLE)

# Installs missing Debian packages (as root, with apt-get) and runs every test.
test: deps
	$(GO) test -race -count=1 -timeout 15m ./...

test-short:
	$(GO) test -short -count=1 ./...

deps:
	@./scripts/deps.sh $(TEST_DEBS)

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Each fuzz target runs for FUZZTIME.
fuzz:
	@./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin
