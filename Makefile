# certbank — one binary (cmd/certbank), one test command (make test).
# The service is built with cgo: go-ethereum's signature recovery is ~3.5x
# faster with libsecp256k1.

GO          ?= go
export CGO_ENABLED := 1
BIN         := bin/certbank
PG_DSN      ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
GOFLAGS_TEST ?= -count=1

.PHONY: all build serve site lint-content test test-go test-node deps deps-apt bench bench-build bench-service bench-x402 contracts fmt vet clean golden

all: build

build:
	$(GO) build -o $(BIN) ./cmd/certbank

# The README's run command: builds the site from content/ in memory and serves
# it with the keyed, paid (development chain) and MCP endpoints on :8080.
serve: build
	./$(BIN) serve

site: build
	./$(BIN) build

lint-content: build
	./$(BIN) lint --strict
	./$(BIN) verify status --check --require-calibration

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Installs what the test suites need and is missing: Debian's Chromium and
# nginx, and each Node project's pinned packages (npm ci from its lockfile).
deps: deps-apt
	cd tools/openapi-validate && npm ci --no-audit --no-fund --loglevel=error
	@for d in interop/x402 interop/mcp e2e; do \
	  if [ -f $$d/package-lock.json ]; then (cd $$d && npm ci --no-audit --no-fund --loglevel=error) || exit 1; fi; \
	done

deps-apt:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx-light"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# Every suite: formatting, vet, Go unit tests (PostgreSQL included when it is
# reachable, required when CERTBANK_REQUIRE_POSTGRES=1), the content checks,
# the OpenAPI validator, x402 interop with the official clients, the MCP
# conformance suite and TypeScript client, the browser tests and Lighthouse,
# and nginx in front of two instances.
test: deps fmt vet build
	@if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then \
	  echo "PostgreSQL reachable: running the PostgreSQL suites"; \
	  export CERTBANK_TEST_POSTGRES="$(PG_DSN)"; \
	elif [ "$$CERTBANK_REQUIRE_POSTGRES" = 1 ]; then \
	  echo "PostgreSQL is required (CERTBANK_REQUIRE_POSTGRES=1) but not reachable at 127.0.0.1:5432"; exit 1; \
	fi; \
	CERTBANK_REQUIRE_NODE_TESTS=1 $(GO) test $(GOFLAGS_TEST) -timeout 20m ./...
	./$(BIN) lint --strict
	./$(BIN) verify status --check --require-calibration
	@for s in interop/x402/run.sh interop/mcp/run.sh e2e/run.sh; do \
	  if [ -x $$s ]; then echo "== $$s"; ./$$s || exit 1; else echo "missing test suite $$s"; exit 1; fi; \
	done
	@echo "make test: all suites passed"

# Rewrites the generator's golden files.
golden:
	$(GO) test ./generator -run Golden -update

contracts:
	cd contracts && npm ci --no-audit --no-fund --loglevel=error && node compile.mjs

bench: bench-build bench-x402 bench-service

bench-build:
	$(GO) test ./generator -run '^$$' -bench 'DecodeOnly|BuildFull|BuildVsDecode|PeakMemory' -benchtime 5x -count 5

bench-x402:
	$(GO) test ./paywall/x402 -run '^$$' -bench . -benchtime 2s -count 3
	$(GO) build -o bin/certbank ./cmd/certbank
	$(GO) build -o bin/loadtest ./loadtest
	./bin/loadtest -bin bin/certbank -pay-rate 300 -d 10s -warmup 0s -per-cert 40

bench-service:
	@if [ -f loadtest/run.sh ]; then ./loadtest/run.sh; else echo "loadtest/run.sh missing"; exit 1; fi

clean:
	rm -rf bin public .certbank
