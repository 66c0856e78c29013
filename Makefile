# tuningbox: `make run` starts the local server on the embedded store, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
LISTEN ?= 127.0.0.1:8080
DATA ?= ./data
FUNCTIONS := $(notdir $(wildcard functions/*))

.PHONY: run build test unit vet bench fmt integration hiera

run:
	$(GO) run ./cmd/tuningbox serve --listen $(LISTEN) --data $(DATA)

# Lambda bootstraps for every function, for provided.al2023 on arm64.
build:
	@for fn in $(FUNCTIONS); do \
	  echo "build functions/$$fn"; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags="-s -w" \
	    -o bin/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

# AWS backend against DynamoDB Local + versitygw, then moto (installs them into .cache/ once).
integration:
	localstack/run-integration.sh

# Real puppet lookups through the tuningbox Hiera backend (installs puppet-agent once).
hiera:
	puppet/test/run.sh

test: vet unit integration hiera

bench:
	bash .ci/bench.sh

fmt:
	gofmt -w $$(git ls-files '*.go')
