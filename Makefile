# Build and test entry points. `make test` is what CI runs (.ci/run): unit
# tests, then the real services (testenv/testenv.sh), the integration tests,
# and always the teardown, exiting with the tests' status.
SHELL := /bin/bash
TESTENV := testenv/testenv.sh
GO ?= go
# Packages to vet and unit-test, e.g. `make test PKGS=./hive/...`.
PKGS ?= ./...
# Packages for the integration step (default: PKGS); lets a run name a
# tag-only package such as ./integration that plain `go vet` cannot load.
INTEGRATION_PKGS ?= $(PKGS)

.PHONY: unit static testenv-up testenv-down testenv-status integration test test-kerberos-long demo bench bench-compare sweep build image chaos soak soak-plot

STATIC_BIN ?= bin/hdfs-sink

## static: the release build (CGO_ENABLED=0, as the Dockerfile builds it)
## must link statically: Kerberos and everything else stay pure Go; and it
## holds no fault-injection switch (they exist only with -tags faults).
static:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(STATIC_BIN) ./cmd/hdfs-sink
	@$(GO) version -m $(STATIC_BIN) | grep -q 'CGO_ENABLED=0' || { echo "$(STATIC_BIN): not built with CGO_ENABLED=0"; exit 1; }
	@if command -v ldd >/dev/null && ldd $(STATIC_BIN) >/dev/null 2>&1; then echo "$(STATIC_BIN) is dynamically linked:"; ldd $(STATIC_BIN); exit 1; fi
	@if grep -a -o -E 'HDFS_SINK_(CRASH_AT|FREEZE_AT|FREEZE_RENAME|PANIC_AT|FAIL_RENAME_EVERY)' $(STATIC_BIN) | head -1 | grep -q .; then echo "$(STATIC_BIN): a fault-injection switch is in the release build (it belongs behind the faults build tag)"; exit 1; fi
	@echo "$(STATIC_BIN): static (CGO_ENABLED=0), no fault-injection switch"

# NOWHERE is a path that cannot exist (/dev/null is no directory).
NOWHERE := /dev/null/nowhere
# UNIT_ENV runs the unit step as on a fresh machine (issue 20): env -i drops
# the caller's environment, HOME is an empty directory, and KRB5_CONFIG (else
# /etc/krb5.conf), the credential cache and the Hadoop and Hive directories
# point NOWHERE. A test that reads this machine's /etc/krb5.conf,
# /etc/hadoop or ~ fails here, not first on a newcomer's machine. Go's own
# settings come from `go env`, so the empty HOME re-downloads nothing.
UNIT_HOME := $(CURDIR)/.unit-home
UNIT_GO_VARS := GOROOT GOPATH GOMODCACHE GOCACHE GOENV GOFLAGS GOTOOLCHAIN \
	GOPROXY GONOPROXY GOSUMDB GONOSUMDB GOPRIVATE GOINSECURE CGO_ENABLED CC
UNIT_ENV = env -i PATH="$$PATH" TMPDIR="$$TMPDIR" HOME=$(UNIT_HOME) \
	KRB5_CONFIG=$(NOWHERE)/krb5.conf KRB5CCNAME=FILE:$(NOWHERE)/krb5cc KRB5_KTNAME=$(NOWHERE)/krb5.keytab \
	HADOOP_CONF_DIR=$(NOWHERE)/hadoop HADOOP_HOME=$(NOWHERE)/hadoop HIVE_CONF_DIR=$(NOWHERE)/hive \
	$(foreach v,$(UNIT_GO_VARS),$(v)='$(shell $(GO) env $(v))')

## unit: formatting, a tidy go.mod and go.sum, go vet (including
## integration-tagged files) and race tests; no services, nothing of this
## machine's (UNIT_ENV). The alert rules' test runs promtool, a unit test
## since it needs no service: testenv.sh unit-tools installs it if missing.
unit: static
	$(TESTENV) unit-tools
	rm -rf $(UNIT_HOME) && mkdir $(UNIT_HOME)
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted:"; echo "$$unformatted"; exit 1; fi
	$(UNIT_ENV) $(GO) mod tidy -diff
	$(UNIT_ENV) $(GO) vet $(PKGS)
	$(UNIT_ENV) $(GO) vet -tags integration $(PKGS)
	$(UNIT_ENV) $(GO) vet -tags demo ./cmd/...
	$(UNIT_ENV) $(GO) vet -tags faults $(PKGS)
	$(UNIT_ENV) $(GO) test -race -timeout 30m $(PKGS)
	$(UNIT_ENV) $(GO) test -race -tags faults -run 'Faults|FailRenames|FreezeRename' ./sink/ ./daemon/
	$(UNIT_ENV) $(GO) test -race -tags demo -run TestDemo ./cmd/hdfs-sink
	$(UNIT_ENV) $(GO) -C packaging/kubernetes vet ./...
	$(UNIT_ENV) $(GO) -C packaging/kubernetes test ./...
	$(UNIT_ENV) $(GO) -C third_party/colinmarc-hdfs test -race . ./internal/transfer
	rm -rf $(UNIT_HOME)

## build: the static binary in bin/, stamped with version, commit and build
## date (`hdfs-sink version`); the same flags as the image's.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $$(packaging/image.sh stamp)" -o bin/hdfs-sink ./cmd/hdfs-sink

## image: the container image, built with podman from Debian's packages
## (packaging/image.sh; FROM scratch, see Dockerfile). IMAGE=name:tag.
IMAGE ?= hdfs-sink:dev
image:
	packaging/image.sh build $(IMAGE)

## testenv-up / testenv-down: start or stop Kafka, HDFS, HMS, registry, Spark venv.
testenv-up:
	$(TESTENV) up

testenv-down:
	$(TESTENV) down

testenv-status:
	$(TESTENV) status

# INTEGRATION_ENV: the integration tests name the test realm's krb5.conf
# (.testenv/krb) themselves; KRB5_CONFIG points NOWHERE so that one which
# forgot fails instead of reading this machine's /etc/krb5.conf, and no
# Hadoop or Hive directory of this machine's reaches Spark. HOME stays:
# testenv keeps its downloads under ~/.cache and ~/.m2.
INTEGRATION_ENV = env -u HADOOP_CONF_DIR -u HADOOP_HOME -u HIVE_CONF_DIR \
	KRB5_CONFIG=$(NOWHERE)/krb5.conf KRB5CCNAME=FILE:$(NOWHERE)/krb5cc

## integration: the packages with tests tagged `integration`; needs `make
## testenv-up` first. In two steps, both always run (the status is the worse):
## 1. SIDE_BY_SIDE_PKGS together (-p 2): the plain-service tests and the
##    Kerberos profile's share only the registry, which neither stops. In
##    each package the tests that stop a service run first and alone, then
##    the others INTEGRATION_PARALLEL at a time (itest.CheckSharing keeps
##    every test declared one or the other; `make unit` checks it).
## 2. every other integration package, one at a time (-p 1): the fault
##    harness (tools/chaos) and the HA pipeline test stop and kill services
##    every test uses.
SIDE_BY_SIDE_PKGS ?= ./integration/exactlyonce ./integration/kerberos
# TEST_FILES tells the packages with integration tests from the others (whose
# tests `make unit` ran already, with the race detector): their test files
# differ with the tag.
TEST_FILES = {{.ImportPath}} {{len .TestGoFiles}} {{len .XTestGoFiles}}
INTEGRATION_PARALLEL ?= 3
# INTEGRATION_FLAGS: more go test flags, e.g. -v, -json or -run.
INTEGRATION_FLAGS ?=
integration:
	@all=$$(comm -23 <($(GO) list -e -tags integration -f '$(TEST_FILES)' $(INTEGRATION_PKGS) | sort) \
	  <($(GO) list -e -f '$(TEST_FILES)' $(INTEGRATION_PKGS) | sort) | cut -d' ' -f1); \
	side=$$($(GO) list -tags integration $(SIDE_BY_SIDE_PKGS)) || exit 1; \
	together=$$(grep -x -F "$$side" <<<"$$all"); alone=$$(grep -v -x -F "$$side" <<<"$$all"); status=0; \
	if [ -n "$$together" ]; then \
	  echo "integration, side by side:" $$together; \
	  $(INTEGRATION_ENV) $(GO) test -tags integration -count=1 -p 2 -parallel $(INTEGRATION_PARALLEL) -timeout 40m $(INTEGRATION_FLAGS) $$together || status=1; \
	fi; \
	if [ -n "$$alone" ]; then \
	  echo "integration, one package at a time"; \
	  $(INTEGRATION_ENV) $(GO) test -tags integration -count=1 -p 1 -timeout 40m $(INTEGRATION_FLAGS) $$alone || status=1; \
	fi; \
	exit $$status

## test: unit, then up, integration and ALWAYS down (even on failure or ^C).
test: unit
	@trap '$(TESTENV) down' EXIT; trap 'exit 130' INT TERM; \
	$(TESTENV) up && $(MAKE) --no-print-directory integration

## test-kerberos-long: the Kerberos renewal run at full length (5 minutes of
## 2-minute tickets, then a KDC outage longer than a ticket) and 5 minutes of
## dfs.encrypt.data.transfer's short-lived keys through one client, services
## up and down around them; `make test` runs the first with a 150 s first
## phase and the second with one round trip.
test-kerberos-long:
	@trap '$(TESTENV) down' EXIT; trap 'exit 130' INT TERM; \
	$(TESTENV) up && HDFS_SINK_KRB_RUN=5m HDFS_SINK_KRB_OUTAGE=150s HDFS_SINK_KRB_KEY_RUN=5m \
	$(INTEGRATION_ENV) $(GO) test -tags integration -count=1 -timeout 30m -run 'TestKerberosLongRun|TestDataEncryptionKey' -v ./integration/kerberos

## demo: the end-to-end demo (cmd/hdfs-sink demo, built with the demo tag:
## production builds leave its embedded Kafka out).
demo:
	$(GO) run -tags demo ./cmd/hdfs-sink demo

## bench: end-to-end benchmarks against the running test services (issue 6);
## BENCH_FLAGS=-full for the whole matrix, -scale 0.1 for a smoke run.
BENCH_FLAGS ?=
bench:
	$(GO) run ./tools/bench -out tools/bench/results/$$(date -u +%Y%m%dT%H%M%SZ).json $(BENCH_FLAGS)

## bench-compare: the same workloads on BASE's build and this tree's, interleaved
## in one run, with throughput, CPU per record and peak RSS as ratios
## (issue 25): make bench-compare BASE=<commit> [BENCH_FLAGS="-only 1KBx8pxavroxdefault"].
bench-compare:
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=<commit> [BENCH_FLAGS=...]"; exit 2; }
	tools/bench/compare.sh $(BASE) $(BENCH_FLAGS)

## sweep: the exactly-once sweeps over every storage call (crash, double crash,
## frozen owner x other owner, a topic re-created under them), not the sample
## `make unit` runs; ~10 min.
sweep:
	$(GO) test -count=1 -timeout 60m -run 'TestCrashSweep|TestZombieSweep|TestTopicChangeSweep' -v ./sink -sweep.full | grep -E 'runs,|^(ok|FAIL|---)'
	$(GO) test -count=1 -timeout 30m -run 'TestCompactionCrashAtEachStep' -v ./compact -sweep.full | grep -E 'runs|^(ok|FAIL|---)'

## chaos: the whole fault catalogue (tools/chaos/, docs/reliability.md) against the
## test services, up with a DataNode volume of their own and always down
## after; ~40 min. CHAOS_FLAGS="-only namenode-sigkill,kafka-sigstop" for
## some faults. Against a staging cluster: go run ./tools/chaos/cmd/chaos faults
## -config staging.json (docs/reliability.md says how).
CHAOS_FLAGS ?=
CHAOS_VOLUME_MB ?= 2048
chaos:
	@trap '$(TESTENV) down' EXIT; trap 'exit 130' INT TERM; export DATANODE_VOLUME_MB=$(CHAOS_VOLUME_MB); \
	$(TESTENV) up && $(GO) run ./tools/chaos/cmd/chaos faults -dir $(CURDIR)/soak-results/chaos-$$(date -u +%Y%m%dT%H%M%SZ) $(CHAOS_FLAGS)

## soak: SOAK_DURATION (default 2h) of steady traffic with a service fault
## every 4 minutes and a SIGKILL of hdfs-sink every 30, then the plot;
## samples, events, summary and soak.png in SOAK_DIR.
SOAK_DURATION ?= 2h
SOAK_FLAGS ?=
SOAK_DIR ?= $(CURDIR)/soak-results/soak-$(shell date -u +%Y%m%dT%H%M%SZ)
PLOT_VENV ?= $(HOME)/.cache/hdfs-sink-testenv/plot-venv
# PLOT makes $(SOAK_DIR)/soak.png, with matplotlib in a venv of its own.
PLOT = . testenv/versions.env; [ -x $(PLOT_VENV)/bin/python ] || \
	{ python3 -m venv $(PLOT_VENV) && $(PLOT_VENV)/bin/pip install -q "matplotlib==$$MATPLOTLIB_VERSION"; } && \
	$(PLOT_VENV)/bin/python tools/chaos/plot.py $(SOAK_DIR) $(SOAK_DIR)/soak.png
soak:
	@trap '$(TESTENV) down' EXIT; trap 'exit 130' INT TERM; \
	$(TESTENV) up && $(GO) run ./tools/chaos/cmd/chaos soak -duration $(SOAK_DURATION) -dir $(SOAK_DIR) $(SOAK_FLAGS); rc=$$?; \
	$(PLOT); exit $$rc

## soak-plot: soak.png again from SOAK_DIR's samples.
soak-plot:
	$(PLOT)
