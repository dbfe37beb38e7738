# swctl: a userspace L2 switching engine.
#   make demo    build, make a three-host netns testbed on a swctl bridge, show it, tear it down
#   make install the binary, manual pages, shell completions and service file (PREFIX, DESTDIR)
#   make test    vet, unit and netns integration tests, BSD cross-builds (build, vet, test binaries)
#   make bench   forwarding benchmarks (go test -bench, the netns comparison table, bench-trunk)
#   make bench-trunk  trunk throughput over shaped links, failover loss, LACP negotiation time
#   make bench-lb     HTTP load balancing: wrk to nginx directly and through swctl lb, nftables, HAProxy
#   make fuzz    every fuzz target, FUZZTIME each (default 60s)
#   make soak    SOAK (default 30m) of traffic and churn; fails on loss, growth or leaks

GO       ?= go
BIN      := bin/swctl
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/swctl/swctl/internal/api.Version=$(VERSION)
CROSS    := openbsd/amd64 openbsd/arm64 freebsd/amd64 freebsd/arm64
# Packages with BSD-specific code or tests: their test binaries are
# compiled for every CROSS target (they can only run on a BSD host).
BSD_TEST_PKGS := ./platform/bpf/ ./platform/tap/ ./platform/linkwatch/ ./platform/stackguard/ ./platform/hostaddr/ ./platform/ifreq/ \
	./promisc/ ./platform/lladdr/ ./internal/daemon/ ./internal/api/ ./internal/selftest/

.PHONY: all build install test unit fuzz soak demo bench bench-trunk bench-lb lint cross deps clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/swctl

deps:
	bash scripts/install-deps.sh

# make install builds swctl and installs it with its manual pages, its
# bash, zsh and fish completions and the service file of the system it is
# for, under DESTDIR (a staging directory for packages; empty by default)
# and PREFIX. SYSTEM (default: this one, uname -s) chooses the layout:
#   Linux    the systemd unit, in PREFIX/lib/systemd/system
#   OpenBSD  the rc.d script /etc/rc.d/swctld (rcctl enable swctld); manual pages in PREFIX/man
#   FreeBSD  the rc.d script PREFIX/etc/rc.d/swctld (swctld_enable="YES" in rc.conf)
# The service files name /usr/local/sbin/swctl: installed, they name
# BINDIR/swctl. On the BSDs, use GNU make (gmake install).
PREFIX   ?= /usr/local
DESTDIR  ?=
SYSTEM   ?= $(shell uname -s)
BINDIR   ?= $(PREFIX)/sbin
SHAREDIR ?= $(PREFIX)/share
MANDIR   ?= $(if $(filter OpenBSD,$(SYSTEM)),$(PREFIX)/man,$(SHAREDIR)/man)
UNITDIR  ?= $(PREFIX)/lib/systemd/system
RCDIR    ?= $(if $(filter OpenBSD,$(SYSTEM)),/etc/rc.d,$(PREFIX)/etc/rc.d)
SERVICE_SED = sed -e 's|/usr/local/sbin|$(BINDIR)|g' -e 's|/usr/local|$(PREFIX)|g'

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(SHAREDIR)/bash-completion/completions $(DESTDIR)$(SHAREDIR)/zsh/site-functions \
		$(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/swctl
	install -m 0644 docs/man/swctl.8 $(DESTDIR)$(MANDIR)/man8/swctl.8
	install -m 0644 docs/man/swctl.conf.5 $(DESTDIR)$(MANDIR)/man5/swctl.conf.5
	install -m 0644 cmd/swctl/completion/swctl.bash $(DESTDIR)$(SHAREDIR)/bash-completion/completions/swctl
	install -m 0644 cmd/swctl/completion/swctl.zsh $(DESTDIR)$(SHAREDIR)/zsh/site-functions/_swctl
	install -m 0644 cmd/swctl/completion/swctl.fish $(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d/swctl.fish
ifeq ($(SYSTEM),Linux)
	install -d $(DESTDIR)$(UNITDIR)
	$(SERVICE_SED) dist/swctl.service > $(DESTDIR)$(UNITDIR)/swctl.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/swctl.service
else ifeq ($(SYSTEM),OpenBSD)
	install -d $(DESTDIR)$(RCDIR)
	$(SERVICE_SED) dist/openbsd/swctld > $(DESTDIR)$(RCDIR)/swctld
	chmod 0555 $(DESTDIR)$(RCDIR)/swctld
else ifeq ($(SYSTEM),FreeBSD)
	install -d $(DESTDIR)$(RCDIR)
	$(SERVICE_SED) dist/freebsd/swctld > $(DESTDIR)$(RCDIR)/swctld
	chmod 0555 $(DESTDIR)$(RCDIR)/swctld
else
	@echo "install: no service file for SYSTEM=$(SYSTEM) (Linux, OpenBSD or FreeBSD)"
endif

# The whole test suite. Integration tests need root (network namespaces);
# they skip with the reason otherwise, and fail instead under
# SWCTL_REQUIRE_NETNS=1, as .ci/run sets it.
test: deps lint cross
	$(GO) test -count=1 -timeout 14m ./...
	$(GO) test -count=1 -race -timeout 10m ./bridge/ ./frame/ ./clock/ ./internal/api/ ./internal/config/ ./promisc/ ./platform/lladdr/ ./platform/memport/ ./lb/ ./lacp/ ./trunk/

# Unit tests only: no root, no network namespaces.
unit:
	SWCTL_REQUIRE_NETNS= $(GO) test -count=1 -short ./...

# Every fuzz target (scripts/fuzz.sh finds them with go test -list), one
# after the other, for FUZZTIME each; FUZZBUDGET=SECONDS instead splits that
# much fuzzing among them all (.ci/run: 60). The checked-in corpora under
# testdata/fuzz/ run with every plain go test.
FUZZTIME ?= 60s
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZBUDGET=$(FUZZBUDGET) GO=$(GO) bash scripts/fuzz.sh

# The soak (integration/soak_linux_test.go, built with the tag soak; not
# part of make test): a protected flow at half its zero-loss rate through
# a bridge while MACs, links, members, trunks and bridges churn around it,
# in network namespaces, as root. It fails on any loss of the protected
# flow, on RSS that keeps growing after the warm-up (a fitted slope), or
# on descriptors and goroutines not back to their baseline after a churn
# cycle (internal/soak judges the samples).
#   SOAK=30m      its length (default); SOAK=5m for a short one
#   SOAK_RATE=n   the protected flow's frames/s instead of half the measured zero-loss rate
SOAK ?= 30m
soak: deps
	SOAK=$(SOAK) SOAK_RATE=$(SOAK_RATE) SWCTL_REQUIRE_NETNS=1 $(GO) test -tags soak -count=1 -v -timeout 0 -run '^TestSoak$$' ./integration/

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

cross:
	@for t in $(CROSS); do \
		os=$${t%/*}; arch=$${t#*/}; \
		echo "cross: $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build ./... || exit 1; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet ./... || exit 1; \
		for p in $(BSD_TEST_PKGS); do \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) test -c -o /dev/null $$p || exit 1; \
		done; \
	done

demo: deps build
	bash scripts/demo.sh $(BIN)

# The netns comparison (cmd/swctl-bench, docs/BENCH.md): direct veth, the
# kernel bridge, swctl (1 and 2 workers, roundrobin trunk) and OVS userspace
# with and without TSO, rows interleaved; one table on stdout, raw samples
# in bench-out/<time>/results.json (its "bench" part).
#   RUNS=n    runs (default 3; about 15 minutes)
#   QUICK=1   short trials (RUNS=1 QUICK=1: about 3 minutes)
#   ROWS=direct,kernel,swctl-w1,swctl-w2,swctl-trunk,ovs,ovs-tso
BENCH_FLAGS = $(if $(QUICK),-quick) $(if $(RUNS),-runs $(RUNS)) $(if $(ROWS),-rows '$(ROWS)')

bench: deps build
	$(GO) test -run '^$$' -bench . -benchmem ./bridge/ ./platform/...
	CGO_ENABLED=0 $(GO) build -o bin/swctl-bench ./cmd/swctl-bench
	bin/swctl-bench -swctl $(BIN) $(BENCH_FLAGS)
	bash scripts/bench-trunk.sh $(BIN)

# Two swctl daemons in namespaces, links shaped with tbf: iperf3 over one
# link and over roundrobin, loadbalance and lacp trunks; failover loss at
# a 1 ms ping; LACP time to collecting+distributing.
bench-trunk: deps build
	bash scripts/bench-trunk.sh $(BIN)

# The regress suite (regress/, cmd/swctl-regress): iperf3 through veth,
# a swctl trunk and a swctl bridge, PROMISC and -PROMISC, then the
# forwarding rate (CPU ns per forwarded frame at a paced load net of
# direct veth, frames/s, RFC 2544 zero-loss rate, loss; window
# benchmark) through a swctl bridge (and a roundrobin swctl trunk: QUICK,
# FULL or RATE_SETUPS), then TCP stream by message size (1 to 65536 bytes)
# across the bridge, then bulk transfer (one host pair, two pairs at once,
# UDP at a fixed rate) across a bridge, then RFC 2889 address caching
# capacity and learning rate of the bridge;
# "patch" and "no patch" interleaved; tables on stdout, report in
# regress-out/<time>/.
# The default run (every suite below, 6 runs) is planned at 42 minutes; the
# plan is printed before the first cell.
#   QUICK=1        1 run of 3 s per cell and role, 0.5 s rate trials, 1 s window benchmark, 5 message sizes of 1 s (under 4 minutes)
#   PATCH=f.diff   patch = the tree + f.diff (temporary worktree); no patch = the tree
#   BASE=rev       no patch = rev (temporary worktree); patch = the tree
#   RUNS=n         runs per cell and role (default 6; 4 = the seed's form)
#   FULL=1         forwarding rate at every RFC 2544 size and through trunk0, 10 s trials, latency, frame loss rate steps, 300 s window benchmark, every message size, 10 s iperf3 tests
#   HOSTS=f.conf   real test hosts (docs/REGRESS.md) instead of the netns testbed
#   SECONDS=n ALPHA=a SETUPS=veth,trunk0,bridge0 SUITES=promisc,rate,msgsize,bulk,rfc2889 (and lb, not in the default: make bench-lb)
#   RATE_SETUPS=direct,bridge0,trunk0 TRIAL=duration WINDOW=duration (0 = none) MSG_SIZES=1,64,65536
#   CPU_RATE=frames/s CPU_TRIAL=duration (0 = none)  the CPU-per-frame run's load and length
#   MAXADDR=n      the rfc2889 bridge's table size, the capacity search's bound (default 65536; QUICK 16384)
REGRESS_FLAGS = $(if $(QUICK),-quick) $(if $(FULL),-full) $(if $(PATCH),-patch '$(PATCH)') \
	$(if $(BASE),-base '$(BASE)') $(if $(RUNS),-runs $(RUNS)) $(if $(SECONDS),-seconds $(SECONDS)) \
	$(if $(ALPHA),-alpha $(ALPHA)) $(if $(SETUPS),-setups $(SETUPS)) $(if $(SUITES),-suites $(SUITES)) \
	$(if $(RATE_SETUPS),-rate-setups $(RATE_SETUPS)) $(if $(TRIAL),-trial $(TRIAL)) $(if $(HOSTS),-hosts '$(HOSTS)') \
	$(if $(WINDOW),-window-duration $(WINDOW)) $(if $(MSG_SIZES),-msg-sizes $(MSG_SIZES)) \
	$(if $(MAXADDR),-maxaddr $(MAXADDR)) $(if $(CPU_RATE),-cpu-rate $(CPU_RATE)) $(if $(CPU_TRIAL),-cpu-trial $(CPU_TRIAL)) \
	$(if $(LB_ROWS),-lb-rows $(LB_ROWS)) $(if $(LB_RUNS),-lb-runs $(LB_RUNS)) $(if $(LB_SECONDS),-lb-seconds $(LB_SECONDS)) \
	$(if $(LB_CONNECTIONS),-lb-connections $(LB_CONNECTIONS))

regress: deps
	CGO_ENABLED=0 $(GO) build -o bin/swctl-regress ./cmd/swctl-regress
	bin/swctl-regress $(REGRESS_FLAGS)

# The regress suite's HTTP load balancing alone (SUITES=lb, issue 19,
# docs/REGRESS.md): wrk to nginx (3 backends, empty page) directly and
# through swctl lb (direct server return), nftables DNAT and HAProxy,
# connection per request and keep-alive, rows interleaved, median of 3;
# the balancer's CPU per request, requests/s, p50/p99.
#   QUICK=1  2 s runs (about 2 minutes)   LB_ROWS=direct,swctl,nftables,haproxy
#   LB_RUNS=n LB_SECONDS=n LB_CONNECTIONS=n   PATCH= and BASE= as for make regress (the swctl row per role)
bench-lb: deps
	CGO_ENABLED=0 $(GO) build -o bin/swctl-regress ./cmd/swctl-regress
	bin/swctl-regress $(REGRESS_FLAGS) -suites lb

clean:
	rm -rf bin
