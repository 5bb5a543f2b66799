# podvisor — the two commands a newcomer needs are `make run` and `make test`.
# Both set up what they need themselves.

GO        ?= go
BIN       := bin/podvisor
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
EXAMPLE   ?= examples/sidecar-first/procs.yaml
FUZZTIME  ?= 10s
# Debian packages the tests use: promtool (prometheus) checks /metrics,
# unshare (util-linux) runs PID-1 tests, python3 serves the quickstart example;
# nginx, postgresql, redis-server and git run in the examples' end-to-end
# tests, file checks that the Dockerfile.base binary is static, and curl and
# ps serve the soak (bench/soak.sh, which CI runs for 3 min); zsh and fish run
# the generated completion scripts (cmd/podvisor/completion_test.go);
# rsvg-convert (librsvg2-bin) renders the timeline SVG in its tests; gcc is
# the C compiler go test -race needs (the race detector runs through cgo);
# tmux, chromium and chromium-driver drive podvisor ui and the web page
# (test/ui).
# README.md names every package here and in IMAGE_DEBS (a test checks).
TEST_DEBS := prometheus util-linux python3 procps curl jq nginx postgresql redis-server git file zsh fish librsvg2-bin gcc tmux chromium chromium-driver systemd

.PHONY: test-vm release release-image test-release lint-arches all build build-pprof run test npm-deps test-image test-examples test-short lint bench fuzz deps clean test-faults soak soak-short bench-peers bench-effect bench-compare

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/podvisor

# The same with /debug/pprof/ on the HTTP listener (left out of the default
# build: see internal/server/pprof_on.go).
build-pprof:
	CGO_ENABLED=0 $(GO) build -trimpath -tags podvisor_pprof -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/podvisor

# Runs examples/sidecar-first (nginx in front of an app) in the foreground
# until Ctrl-C, installing nginx and python3 first if they are missing.
run: build
	@./scripts/deps.sh nginx python3
	$(BIN) check -c $(EXAMPLE)
	$(BIN) graph -c $(EXAMPLE)
	$(BIN) run -c $(EXAMPLE)

# Installs missing Debian packages (as root, with apt-get) and runs every test,
# the image tests included.
test: deps npm-deps
	$(GO) test -race -count=1 -timeout 15m ./...
	# In full without -race, see internal/supervisor/race_on_test.go.
	$(GO) test -count=1 -run '^(TestInvariants|TestLargeStartGoesInWaves)$$' ./internal/supervisor/
	$(GO) test -count=1 -tags podvisor_pprof -run 'Pprof|Unknown' ./internal/server/
	$(MAKE) test-image

# Builds Dockerfile.base and the fat example with podman and runs them
# (test/image; docs/base-image.md). podman runs through scripts/podman.sh with
# runc and netavark (aardvark-dns, iptables); catatonit serves --init and
# pods, and mmdebstrap makes the Debian and Go base images when no registry
# is reachable.
IMAGE_DEBS := podman runc netavark aardvark-dns iptables catatonit mmdebstrap
test-image:
	@./scripts/deps.sh $(IMAGE_DEBS)
	PODVISOR_IMAGE_TESTS=1 PODVISOR_REQUIRE_TOOLS=1 $(GO) test -count=1 -timeout 30m -v ./test/image/

# Runs only the examples end to end, against the real Debian packages.
test-examples: deps
	PODVISOR_REQUIRE_TOOLS=1 $(GO) test -race -count=1 -timeout 10m ./test/examples/

test-short:
	$(GO) test -short -count=1 ./...

# test/kube plays pods from podman images and builds image roots with
# busybox-static: its packages come before go test, not only in test-image.
deps:
	@./scripts/deps.sh $(TEST_DEBS) busybox-static $(IMAGE_DEBS)

# Node.js from Debian (unless an npm is already there, as a NodeSource nodejs
# brings its own, which Debian's npm package conflicts with) and the npm
# packages of test/mcp (the official MCP
# TypeScript SDK, pinned by its package-lock.json) for TestMCPWithTypeScriptSDK.
npm-deps:
	@command -v npm >/dev/null 2>&1 || ./scripts/deps.sh nodejs npm
	cd test/mcp && npm ci --no-audit --no-fund --loglevel=error

# Static binaries for every architecture of RELEASE_ARCHES, an SBOM of each,
# a .deb of each and SHA256SUMS into dist/ (scripts/release.sh, then
# scripts/deb.sh; docs/install.md).
release:
	./scripts/release.sh $(RELEASE_ARCHES)
	./scripts/deb.sh $(RELEASE_ARCHES)

# The base image for amd64 and arm64 as one manifest list (podman;
# scripts/image-multiarch.sh, docs/install.md). IMAGE names it; LOCAL_BASES=1
# makes the Debian and Go bases locally where no registry is reachable.
IMAGE ?= localhost/podvisor-base:$(VERSION)
release-image:
	@./scripts/deps.sh $(IMAGE_DEBS)
	./scripts/image-multiarch.sh $(IMAGE) amd64 arm64

# The release's tests (test/release): two builds are byte-identical; the
# arm64 and s390x (big-endian) binaries and unit tests work under qemu-user;
# the .deb installs with apt-get in a clean Debian root (mmdebstrap); the
# multi-arch base image (amd64 + arm64, scripts/image-multiarch.sh) builds
# and its arm64 image runs. binfmt.sh registers qemu-user with binfmt_misc
# for that (machine-wide, until reboot).
# RELEASE_RUN picks tests (go test -run), e.g. 'Reproducible|Smoke'.
RELEASE_DEBS := qemu-user-static util-linux mmdebstrap arch-test $(IMAGE_DEBS)
RELEASE_RUN  ?= .
test-release:
	@./scripts/deps.sh $(RELEASE_DEBS)
	@./scripts/binfmt.sh aarch64
	PODVISOR_RELEASE_TESTS=1 $(GO) test -count=1 -timeout 30m -v -run '$(RELEASE_RUN)' ./test/release/

# cgroup v2 with every controller delegated, which the v1 hybrid hosts here
# cannot give (test/vm; docs/resources.md): boots Debian's cloud kernel under
# qemu-system-x86_64 with software emulation (no KVM) from an initramfs the
# test builds (busybox-static, podvisor as PID 1, the scenario program), and
# runs every scenario in that one boot (about 3-4 min on 2 loaded cores).
# VM_RUN picks tests (go test -run); PODVISOR_VM_ONLY=cpu,oom,... runs some
# scenarios; PODVISOR_VM_BENCH=N sets the bench scenario's processes (50).
VM_DEBS := qemu-system-x86 linux-image-cloud-amd64 busybox-static
VM_RUN  ?= .
test-vm:
	@./scripts/deps.sh $(VM_DEBS)
	PODVISOR_VM_TESTS=1 $(GO) test -count=1 -timeout 20m -v -run '$(VM_RUN)' ./test/vm/

# The architectures of a release (make release; docs/install.md). make lint
# builds the binary for the 32-bit and big-endian ones (code whose types
# differ by architecture, syscall structs and 32-bit ints, breaks there
# first): a vet of the whole tree for six more architectures took 17 min of
# CPU, too much for CI; make lint-arches does that.
RELEASE_ARCHES := amd64 arm64 arm 386 riscv64 ppc64le s390x
LINT_ARCHES    := arm 386 s390x

lint:
	@./scripts/no-binaries.sh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@for arch in $(LINT_ARCHES); do \
	  echo "GOOS=linux GOARCH=$$arch $(GO) build -o /dev/null ./cmd/podvisor"; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -o /dev/null ./cmd/podvisor || exit 1; \
	done
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

# go vet of the whole tree for every release architecture (long: see above).
lint-arches:
	@for arch in $(filter-out $(shell $(GO) env GOARCH),$(RELEASE_ARCHES)); do \
	  echo "GOOS=linux GOARCH=$$arch $(GO) vet ./..."; \
	  GOOS=linux GOARCH=$$arch $(GO) vet ./... || exit 1; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Side by side with supervisord, s6, tini and dumb-init (root; about 11 min;
# ROUNDS=5 by default). Figures: docs/BENCHMARKS.md.
PEER_DEBS := supervisor tini dumb-init s6 util-linux
bench-peers:
	@./scripts/deps.sh $(PEER_DEBS)
	./bench/peers/run.sh $(or $(ROUNDS),5)

# Effect level, timed by the children (bench/stampchild, built with cc):
# podvisor alone, then side by side with the peers (root). ROUNDS=3.
bench-effect:
	./bench/effect.sh $(or $(ROUNDS),3)
bench-compare:
	./bench/compare.sh $(or $(ROUNDS),3)

# The fault catalogue (FAULTS.md; docs/reliability.md maps each scenario to
# its test): the black-box TestFault_* scenarios and the e2e and unit tests
# the table names, all against the real binary where it matters.
test-faults: deps
	$(GO) test -race -count=1 -timeout 15m ./test/e2e/ ./internal/...

# Soak: 50 processes with restarts, probes and log floods; samples podvisor's
# RSS, fds, threads and zombies (bench/soak.sh). One hour; soak-short (3 min) for CI.
soak:
	./bench/soak.sh 1h

soak-short:
	./bench/soak.sh 3m

# Each fuzz target runs for FUZZTIME.
fuzz:
	@./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin
