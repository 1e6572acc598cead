# Developer and CI entry points. Every Go target runs in each module of the
# repository (root, tests, benchmarks, ...): any directory holding a go.mod,
# outside the downloaded servers in .servers/.

GO      ?= go
MODULES := $(shell find . -name go.mod -not -path './.servers/*' -not -path '*/testdata/*' -exec dirname {} \; | sort)
FUZZTIME ?= 30s
SOAKTIME ?= 30m
SOAKFAULT ?= 1m
SOAKFLAGS ?=
# OLDGO is the oldest Go the root module supports: the go directive of its
# go.mod. The go command downloads it from the module proxy when missing.
OLDGO ?= go1.25.5
# STATICCHECK runs staticcheck's unused-code check (U1000) in make vet: dead
# code is removed, or kept with a //lint:ignore U1000 line saying why (the
# generator may emit a call to it).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all servers vet api test test-oldgo leasecheck demo bench fmt fuzz soak goredis-suite clean-servers

all: test

## servers: install Redis 7.0, 8.0, 8.6 and Valkey 8.1, 9.1 under .servers/bin (or $$RESPIRE_SERVERS_DIR/bin)
servers:
	@scripts/servers.sh

## vet: go vet and staticcheck's unused-code check in every module, and the check that api/*.txt lists the current public API
vet:
	@set -e; for m in $(MODULES); do echo "go vet $$m"; (cd $$m && $(GO) vet ./... && $(GO) run $(STATICCHECK) -checks U1000 ./...); done
	@echo "apilist -check"; $(GO) run ./internal/cmd/apilist -check

## api: rewrite api/*.txt, the listing of the public API (docs/api.md); review the diff
api:
	$(GO) run ./internal/cmd/apilist

## leasecheck: vet and test package respire with the lease misuse checks on, without -race
leasecheck:
	$(GO) vet -tags respire_leasecheck ./respire/
	$(GO) test -count=1 -tags respire_leasecheck ./respire/

## test: race-enabled tests in every module, against real servers
# -parallel 4: the tests that call t.Parallel mostly wait for servers
# (failovers, sentinels); go test's default, GOMAXPROCS (2 on CI), would
# run only two of them at once.
# The integration package, the longest (minutes, most of them waiting for
# servers), is built first and runs in the background from then on; its
# output is shown at the end. What only uses the CPU (vet, the build of the
# other test binaries) runs beside it at the lowest priority (nice 19), so
# that its servers, sentinels and clients get the cores whenever they need
# them: built at the same priority, the race binaries took both cores for
# minutes while servers and sentinels had to answer within their timeouts,
# and on a slow host (CI at 924 s) sentinels starved past
# down-after-milliseconds failed masters over that no test had touched.
# Then the other packages' tests, beside it.
INTEGRATION := github.com/respire-go/respire/tests/integration
NICE ?= nice -n 19
test: servers
	@log=$$(mktemp); bin=$$(mktemp -d); trap 'rm -rf $$log $$log.rc $$bin' EXIT; \
	fail=""; \
	echo "go test -c $(INTEGRATION)"; (cd tests && $(GO) test -race -c -o $$bin/ ./integration/) || fail="$$fail build-integration"; \
	echo "go test $(INTEGRATION) (in the background; its output comes at the end)"; \
	(cd tests && $(GO) test -race -count=1 -parallel 4 -timeout 30m ./integration/ >$$log 2>&1; echo $$? >$$log.rc) & bg=$$!; \
	$(NICE) $(MAKE) --no-print-directory vet leasecheck test-oldgo || fail="$$fail vet"; \
	for m in $(MODULES); do echo "go test -c $$m (build only, $(NICE))"; \
		(cd $$m && $(NICE) $(GO) test -race -c -o $$bin/ ./...) || fail="$$fail build:$$m"; done; \
	$(NICE) $(GO) test -c -o $$bin/ ./... && (cd tests && $(NICE) $(GO) test -c -o $$bin/ ./integration/) || fail="$$fail build-norace"; \
	for m in $(MODULES); do echo "go test $$m"; \
		pkgs=$$(cd $$m && $(GO) list ./... | grep -vx '$(INTEGRATION)'); \
		(cd $$m && $(GO) test -race -count=1 -parallel 4 -timeout 30m $$pkgs) || fail="$$fail $$m"; done; \
	echo "allocation targets (without -race)"; (cd tests && $(GO) test -count=1 -run 'HotPathAllocations' ./integration/) || fail="$$fail allocations"; \
	echo "root module without -race (its !race tests: allocations, the paths race builds replace)"; $(GO) test -count=1 ./... || fail="$$fail root-norace"; \
	wait $$bg; echo "go test $(INTEGRATION)"; cat $$log; [ "$$(cat $$log.rc)" = 0 ] || fail="$$fail integration"; \
	if [ -n "$$fail" ]; then echo "tests failed in:$$fail"; exit 1; fi

## test-oldgo: go vet of the root module with $(OLDGO), so nothing newer than the go directive slips in
# vet type-checks every package and its tests against the oldest Go's
# standard library, which is what could slip in: the language version is
# the go directive's under any toolchain. Running the tests again there
# (without -race; the main run has them with it) rebuilt and linked every
# test binary under that toolchain: minutes on a fresh clone.
test-oldgo: servers
	GOTOOLCHAIN=$(OLDGO) $(GO) vet ./...

## demo: run cmd/demo (it starts its own throwaway server)
demo: servers
	$(GO) run ./cmd/demo

## bench: the load tool against Respire and its peers; starts its own server (see benchmarks/README.md)
bench: servers
	cd benchmarks && $(GO) run ./cmd/load -json load.json

## fmt: gofmt every Go file
fmt:
	@find . -name '*.go' -not -path './.servers/*' -not -path './.git/*' -exec gofmt -s -w {} +

## fuzz: every fuzz target (func FuzzX in a _test.go file) of every module, one after the other, $(FUZZTIME) each; not part of test
# A run that fails with a bare "context deadline exceeded" and writes no failing
# input is Go's own -fuzztime race (go.dev/issue/75804, unfixed in Go 1.26), not
# a finding: it is reported and the next target runs. FUZZTIME=100000x avoids it.
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for m in $(MODULES); do \
		for d in $$(cd $$m && $(GO) list -f '{{.Dir}}' ./...); do \
			for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$d/*_test.go 2>/dev/null); do \
				echo "fuzz $$t in $$d"; \
				if (cd $$d && $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) .) >$$log 2>&1; then \
					tail -n 3 $$log; \
				elif grep -qx '    context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
					tail -n 6 $$log; echo "$$t: Go's -fuzztime race (go.dev/issue/75804), no failing input: not a finding"; \
				else \
					cat $$log; exit 1; \
				fi; \
			done; \
		done; \
	done

## soak: tests/cmd/soak, mixed load with a fault every SOAKFAULT for SOAKTIME, other flags in SOAKFLAGS (make soak SOAKTIME=2m SOAKFAULT=30s); not part of test
soak: servers
	cd tests && $(GO) run ./cmd/soak -duration $(SOAKTIME) -fault-every $(SOAKFAULT) $(SOAKFLAGS)

## goredis-suite: go-redis's own command, pub/sub and transaction suites, and asynq's and watermill-redisstream's, through the goredis adapter (GOREDIS_SUITE=both: on go-redis too, the baseline, and go-redis's cluster suite; GOREDIS_SUITE=cluster: the cluster suite alone, on the harness's cluster, go-redis and adapter, about 3 minutes more), tests taken from the module cache (tests/goredissuite); minutes; CI runs it after test
GOREDIS_SUITE ?= adapter
goredis-suite: servers
	cd tests && RESPIRE_GOREDIS_SUITE=$(GOREDIS_SUITE) $(GO) test -count=1 -v -parallel 8 -timeout 40m ./goredissuite/

## clean-servers: remove the downloaded servers
clean-servers:
	rm -rf .servers
