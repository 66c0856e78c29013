# tuningbox: `make run` starts the local server on the embedded store, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
LISTEN ?= 127.0.0.1:8080
DATA ?= ./data
FUNCTIONS := $(notdir $(wildcard functions/*))

.PHONY: run build test unit vet bench fmt integration hiera keystone synth cdk-test deploy fuzz agent memory python3-yaql puppet-agent console console-vendor

# A local development administrator (admin/admin-password) unless the environment names
# another; it is created only when missing. Never use these defaults on a shared server.
run:
	TUNINGBOX_ADMIN_USER=$${TUNINGBOX_ADMIN_USER:-admin} TUNINGBOX_ADMIN_PASSWORD=$${TUNINGBOX_ADMIN_PASSWORD:-admin-password} \
	  $(GO) run ./cmd/tuningbox serve --listen $(LISTEN) --data $(DATA)

# Lambda bootstraps for every function, for provided.al2023 on arm64.
build:
	@for fn in $(FUNCTIONS); do \
	  echo "build functions/$$fn"; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags="-s -w" \
	    -o bin/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

# CDK: the Go app in infra/, a module of its own (cdk.json builds and runs it), the CLI from npm under .cache/cdk.
# API_TYPE=rest puts a REST API in front instead of an HTTP API (LocalStack Community).
CDK_CLI_VERSION ?= 2.1148.1
CDK := .cache/cdk/node_modules/.bin/cdk
API_TYPE ?= http
export CDK_DISABLE_CLI_TELEMETRY := true
# jsii (under the CDK and its tests) prints a banner on Node 20, which still works.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

$(CDK):
	npm install --prefix .cache/cdk --no-audit --no-fund --no-update-notifier aws-cdk@$(CDK_CLI_VERSION)

# cdk.out/Tuningbox.template.json (offline) from the bootstraps of make build
# (CDK_OUT=dir writes elsewhere: run-integration.sh keeps the REST variant in cdk.out-rest).
CDK_OUT ?= cdk.out
synth: build $(CDK)
	$(CDK) synth --no-notices --quiet -c apiType=$(API_TYPE) -o $(CDK_OUT)

# The stack's template assertions (infra/*_test.go), offline: they need Node, on which
# jsii runs the CDK library bundled in the Go module, but not the CDK CLI.
cdk-test:
	cd infra && $(GO) test -count=1 ./...

# Deploys to the account and region of the current AWS credentials (run `$(CDK) bootstrap` once per account and region).
deploy: build $(CDK)
	$(CDK) deploy --no-notices -c apiType=$(API_TYPE) --outputs-file cdk.out/outputs.json

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) vet $(addprefix ./,$(sort $(dir $(wildcard .ci/*/*.go))))
	cd infra && $(GO) vet ./...

# The root module: no Node needed (the CDK app in infra/ is tested by cdk-test).
# The packages with concurrency (background goroutines, caches, shared state)
# run under the race detector, the rest plain. On a 2-core machine the whole
# tree with -race took 16 min (authapi's bcrypt-heavy route walk alone 8.5 min,
# 14 s plain), so it is not raced; neither is cmd/tuningbox, whose
# TestConfigWatch runs two CLI commands at once over the package's global flag
# variables (a race of the test, not of the server). shared/yaql's and
# shared/graphs' differential tests need Debian's python3-yaql, the reference engine;
# shared/graphs' fault-tolerance test runs Astute's engine on puppet-agent's Ruby.
RACE_PKGS := ./shared/configdb/... ./shared/store/... ./shared/cache/... ./shared/retry/... \
	./shared/httpapi ./shared/auth ./shared/app ./shared/keystone/... ./shared/graphs/... ./shared/nodes/... ./shared/agent \
	./shared/logwriter ./shared/logjson ./shared/envexport
unit: python3-yaql puppet-agent
	$(GO) test -count=1 $$($(GO) list ./... | grep -vxF "$$($(GO) list $(RACE_PKGS))")
	$(GO) test -race -count=1 $(RACE_PKGS)

python3-yaql:
	.ci/python3-yaql.sh

puppet-agent:
	.ci/puppet-agent.sh

# AWS backend against DynamoDB Local + versitygw, then moto (installs them into .cache/ once):
# `tuningbox serve --backend aws`, then the Lambda functions behind the local API Gateway.
integration:
	localstack/run-integration.sh

# Real puppet lookups through the tuningbox Hiera backend, and puppet apply with
# tuningbox::override_resources (installs puppet-agent once).
hiera:
	puppet/test/run.sh

# X-Auth-Token against a real Keystone on SQLite (installs Debian's python3-keystone once).
keystone:
	keystone/run.sh

# Deployment graphs end to end: tuningbox serve, three tuningbox agent processes, real shell and puppet apply tasks.
agent:
	agent/test/run.sh

# The console (/ui/) in headless chromium (installs Debian's chromium once): login, every
# view from a seeded store of 1,000 nodes, a live run, a node user; screenshots in console/test/artifacts/.
console:
	console/test/run.sh

# Refetches the console's libraries from npm (pinned versions and integrity) into
# shared/httpapi/console/web/vendor/, which is committed.
console-vendor:
	shared/httpapi/console/vendor.sh

# serve's anonymous memory under large reads (.ci/memory): a real server with the
# default 256 MiB cache budget, 30 versions of a 7 MB document read as versions,
# as_of, explain and diffs by 3 clients; RssAnon must stay within 1.25 x the
# budget + 64 MiB. About a minute of both cores.
memory:
	TUNINGBOX_MEMORY_TEST=1 $(GO) test -count=1 -v -timeout 20m ./.ci/memory/

# Every fuzz target of the tree for FUZZTIME each (`unit` already runs their seed corpora).
FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) .ci/fuzz.sh

test: vet unit cdk-test integration hiera keystone agent console memory fuzz

bench:
	bash .ci/bench.sh

fmt:
	gofmt -w $$(git ls-files '*.go')
