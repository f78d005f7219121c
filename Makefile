# countertop — build and test.
#
#   make test    vet, lint, the alert rules' tests, then the whole test suite with the race detector (what CI runs)
#   make lint    staticcheck, and every switch on the project's enums exhaustive
#   make demo    the dashboard on an embedded Redis with simulated traffic
#   make test-servers  the tests that start servers again, on Redis 8 and
#                Valkey 8 (built once by ../shared/servers/build)
#   make chaos   the fault suite: restarts, killed connections, stalls, floods,
#                races and a cluster failover, each against servers it starts
#   make fuzz    a short run of every fuzz target
#   make bench   the Go benchmarks (see BENCHMARKS.md for the full scripts)
#   make man     the manual page, bin/countertop.1 (man -l bin/countertop.1)
#   make release-check  goreleaser check, and a snapshot release into dist/
#   make screenshot  docs/screen.svg, the README's picture, from the demo

GO      ?= go
FUZZTIME ?= 15s

.PHONY: all build test alerts-test test-servers deps vet lint chaos demo fuzz bench man release-check screenshot clean

all: build

build:
	$(GO) build -o bin/countertop .

# The tests start their own redis-server processes (never the one on the
# default port) and a Prometheus (serve's end-to-end test), drive the real binary in tmux and complete its commands in
# bash (with bash-completion, which cobra's script needs), zsh and fish, so
# all of them must be installed.
deps:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v zsh >/dev/null 2>&1 || missing="$$missing zsh"; \
	command -v fish >/dev/null 2>&1 || missing="$$missing fish"; \
	[ -f /usr/share/bash-completion/bash_completion ] || missing="$$missing bash-completion"; \
	{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || missing="$$missing prometheus"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

vet:
	$(GO) vet -tags chaos ./...

# staticcheck with its default checks, and the exhaustive analyzer: a switch
# on one of the project's enums (layouts, statuses, sort keys, value kinds...)
# names every value, a default case not counting, so a new value is a
# finding at each switch that must decide about it. Types of other modules
# are left out (a switch on a mouse button handles the buttons it wants), and
# so are the Num... counts that size tables. Both tools are pinned in go.mod's
# tool block: `go tool` builds them, nothing to install. -tags chaos (here and
# in vet) adds the fault suite's files; no file is built only without it.
EXHAUSTIVE = -typeonly '^github\.com/countertop/countertop/' \
	-constignore '^github\.com/countertop/countertop/.*\.[Nn]um[A-Z][A-Za-z]*$$'

lint:
	$(GO) tool staticcheck -tags chaos ./...
	GOFLAGS="$$GOFLAGS -tags=chaos" $(GO) tool exhaustive $(EXHAUSTIVE) ./...

test: deps vet lint alerts-test
	$(GO) test -race -count=1 ./...

# The alert rules of docs/alerts against their unit tests, in promtool
# (Debian's prometheus package).
alerts-test: deps
	promtool check rules docs/alerts/countertop.rules.yml
	promtool test rules docs/alerts/countertop.rules.test.yml

# The servers test-servers runs on besides PATH's (Debian's Redis 7.0), and
# the script that builds each once, with TLS, into ~/.cache/countertop-servers
# and prints its folder of binaries.
SERVERS ?= redis-8 valkey-8
SERVERS_BUILD ?= ../shared/servers/build

# Every package whose tests start a server (they import internal/redistest),
# run on each of SERVERS: COUNTERTOP_REDIS_BIN tells internal/redistest the
# server's folder. Redis 8 has hash-field TTLs, so there the tests of them
# fail rather than skip (COUNTERTOP_REQUIRE_FIELD_TTL). Once every server is
# built, their runs go side by side, each one's output shown once it ends:
# the tests mostly wait on the servers they start, so two runs take little
# more than the longer one.
test-servers: deps
	@pkgs=$$($(GO) list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... | \
		awk '/ [^ ]*\/internal\/redistest( |$$)/ {print $$1}'); \
	[ -n "$$pkgs" ] || { echo "test-servers: no package imports internal/redistest" >&2; exit 1; }; \
	logs=$$(mktemp -d) && trap 'rm -rf "$$logs"' EXIT; \
	for s in $(SERVERS); do \
		$(SERVERS_BUILD) $$s >/dev/null || { echo "test-servers: could not build $$s with $(SERVERS_BUILD)" >&2; exit 1; }; \
	done; \
	pids=; for s in $(SERVERS); do \
		bin=$$($(SERVERS_BUILD) $$s); \
		case $$s in redis-*) req=1;; *) req=;; esac; \
		{ echo "test-servers: $$s: $$("$$bin/redis-server" --version)"; \
		  COUNTERTOP_REDIS_BIN="$$bin" COUNTERTOP_REQUIRE_FIELD_TTL=$$req $(GO) test -race -count=1 $$pkgs; } >"$$logs/$$s" 2>&1 & \
		pids="$$pids $$!"; \
	done; \
	set -- $$pids; failed=; for s in $(SERVERS); do \
		wait $$1 || failed="$$failed $$s"; shift; cat "$$logs/$$s"; \
	done; \
	[ -z "$$failed" ] || { echo "test-servers: tests failed on$$failed" >&2; exit 1; }

# The whole fault suite; `make test` runs its quick part (files without the
# chaos build tag), and this adds the scenarios that wait out stalls, flood
# a subscription or fail a cluster over.
chaos: deps
	$(GO) test -race -count=1 -tags chaos ./internal/chaos/

demo:
	$(GO) run . demo

fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParseValue$$' -fuzztime=$(FUZZTIME) ./model/
	$(GO) test -run='^$$' -fuzz='^FuzzGlobMatch$$' -fuzztime=$(FUZZTIME) ./model/
	$(GO) test -run='^$$' -fuzz='^FuzzPrintable$$' -fuzztime=$(FUZZTIME) ./model/
	$(GO) test -run='^$$' -fuzz='^FuzzRead$$' -fuzztime=$(FUZZTIME) ./model/
	$(GO) test -run='^$$' -fuzz='^FuzzDecodeCount$$' -fuzztime=$(FUZZTIME) ./model/
	$(GO) test -run='^$$' -fuzz='^FuzzSparkline$$' -fuzztime=$(FUZZTIME) ./model/
	$(GO) test -run='^$$' -fuzz='^FuzzWriteSnapshotJSON$$' -fuzztime=$(FUZZTIME) ./internal/report/
	$(GO) test -run='^$$' -fuzz='^FuzzWriteSnapshotCSV$$' -fuzztime=$(FUZZTIME) ./internal/report/
	$(GO) test -run='^$$' -fuzz='^FuzzKeySorter$$' -fuzztime=$(FUZZTIME) ./internal/report/
	$(GO) test -run='^$$' -fuzz='^FuzzTTLWidth$$' -fuzztime=$(FUZZTIME) ./internal/report/
	$(GO) test -run='^$$' -fuzz='^FuzzKeyLines$$' -fuzztime=$(FUZZTIME) ./config/
	$(GO) test -run='^$$' -fuzz='^FuzzDrain$$' -fuzztime=$(FUZZTIME) ./redisclient/

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./model/ ./internal/report/ ./ui/
	$(GO) test -run='^$$' -bench=NotificationDrain -benchmem -benchtime=1000000x ./redisclient/

man:
	@mkdir -p bin
	$(GO) run ./internal/cli/mangen > bin/countertop.1

# goreleaser at a pinned version, through go run, so that a fresh machine
# needs nothing but Go: its first run downloads and builds it, later ones
# take it from Go's cache. The snapshot cross-compiles every target of
# .goreleaser.yaml; the binary for this machine must then say the version
# and commit it was stamped with (goreleaser knows the commit only in a
# clone with a remote, as CI's is), and each archive hold the README, the
# man page and the completions.
GORELEASER ?= $(GO) run github.com/goreleaser/goreleaser/v2@v2.17.0

release-check:
	$(GORELEASER) check
	$(GORELEASER) release --snapshot --clean
	@bin=$$(ls dist/countertop_$$($(GO) env GOOS)_$$($(GO) env GOARCH)*/countertop) && \
	version=$$($$bin version) && echo "release-check: $$bin version: $$version" && \
	commit=" $$(git rev-parse --short=12 HEAD),"; [ -n "$$(git remote)" ] || commit=; \
	case "$$version" in *-snapshot"$$commit"*) ;; \
		*) echo "release-check: want the snapshot's version and commit$${commit:+ ($$commit)}" >&2; exit 1;; esac
	@for a in dist/*.tar.gz dist/*.zip; do \
		[ -e "$$a" ] || continue; \
		list=$$(case $$a in *.zip) unzip -Z1 $$a;; *) tar tzf $$a;; esac) || exit 1; \
		for f in README.md man/countertop.1 completions/countertop.bash completions/_countertop completions/countertop.fish completions/countertop.ps1; do \
			echo "$$list" | grep -qx "$$f" || { echo "release-check: $$a has no $$f" >&2; exit 1; }; \
		done; \
	done; echo "release-check: $$(ls dist/*.tar.gz dist/*.zip 2>/dev/null | wc -l) archives, each with the README, the man page and the completions"
	@test -s dist/checksums.txt && test -s dist/homebrew/Casks/countertop.rb

# The README's picture: the real dashboard running the demo in tmux,
# drawn by charmbracelet/freeze (run with go run, not a dependency).
screenshot:
	./scripts/screenshot.sh

clean:
	rm -rf bin dist
