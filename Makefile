# Developer and CI entry points. Every Go target runs in each module of the
# repository (root, tests, benchmarks, ...): any directory holding a go.mod,
# outside the downloaded servers in .servers/.

GO      ?= go
MODULES := $(shell find . -name go.mod -not -path './.servers/*' -not -path '*/testdata/*' -exec dirname {} \; | sort)
FUZZTIME ?= 30s

.PHONY: all servers vet test leasecheck demo bench fmt fuzz clean-servers

all: test

## servers: install Redis 7.0, Redis 8.0 and Valkey 8.1 under .servers/bin
servers:
	@scripts/servers.sh

## vet: go vet in every module
vet:
	@set -e; for m in $(MODULES); do echo "go vet $$m"; (cd $$m && $(GO) vet ./...); done

## leasecheck: vet and test package respire with the lease misuse checks on, without -race
leasecheck:
	$(GO) vet -tags respire_leasecheck ./respire/
	$(GO) test -count=1 -tags respire_leasecheck ./respire/

## test: race-enabled tests in every module, against real servers
test: servers vet leasecheck
	@fail=""; for m in $(MODULES); do echo "go test $$m"; (cd $$m && $(GO) test -race -count=1 ./...) || fail="$$fail $$m"; done; \
	echo "allocation targets (without -race)"; (cd tests && $(GO) test -count=1 -run TestHotPathAllocations ./integration/) || fail="$$fail allocations"; \
	if [ -n "$$fail" ]; then echo "tests failed in:$$fail"; exit 1; fi

## demo: run cmd/demo (it starts its own throwaway server)
demo: servers
	$(GO) run ./cmd/demo

## bench: the load tool against Respire and its peers; starts its own server (see benchmarks/README.md)
bench: servers
	cd benchmarks && $(GO) run ./cmd/load -json load.json

## fmt: gofmt every Go file
fmt:
	@find . -name '*.go' -not -path './.servers/*' -not -path './.git/*' -exec gofmt -s -w {} +

## fuzz: a short fuzzing run of the RESP reader
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzReader -fuzztime=$(FUZZTIME) ./transport/resp

## clean-servers: remove the downloaded servers
clean-servers:
	rm -rf .servers
