# zoekt-operator build. `make` builds bin/zoekt-operator and bin/zoekt-connector; `make test` installs
# what is missing, builds everything under AddressSanitizer and UndefinedBehaviorSanitizer, starts a
# local Kubernetes control plane and runs every suite; `make demo` runs the operator on that plane.
#
# Both variants compile at -O2 so that the warnings that only deeper analysis finds (format truncation,
# maybe-uninitialized) fail every build, not just the shipped one.
#
# Source discovery is by folder: every .c under lib/ goes into libzk.a, every .c under controller/ and
# connector/ except main.c into that program's library, so unit tests can link any module.

PKGS      := libcurl libcjson yaml-0.1 openssl libmicrohttpd zlib
CC        ?= cc
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CSTD      := -std=c11 -D_GNU_SOURCE
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
# The version both programs report (--version, logs, the MCP handshake) and the tag of the project's
# default images: defined here and only here. Objects do not depend on it: `make clean` after a change.
VERSION   := 0.1.0
CPPFLAGS  := -Ilib -I. -DZK_VERSION='"$(VERSION)"'
REL_FLAGS := -O2 -g
SAN_FLAGS := -O2 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
# ThreadSanitizer cannot share a binary with AddressSanitizer: the suites that start threads are built a
# third time, under build/tsan/, and run as tsan/<suite> next to their san/ selves.
TSAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
TSAN_UNIT  := test_budget test_cmetrics test_controller test_fanout test_front test_hook test_http test_informer test_leader test_listcache \
              test_mcp_server test_peerwatch test_queue test_reconcile test_refs test_serve test_shards
# Integration programs that start threads (test_zoekt_client's server is the san build of
# tests/tools/zoekt-replay; test_kube_client's watches and token reloads run against the plane).
TSAN_INTEG := test_kube_client test_mcp_streamable test_zoekt_client

LIB_SRC   := $(sort $(wildcard lib/*.c lib/*/*.c))
CTRL_SRC  := $(sort $(filter-out controller/main.c,$(wildcard controller/*.c controller/*/*.c)))
CONN_SRC  := $(sort $(filter-out connector/main.c,$(wildcard connector/*.c connector/*/*.c)))
ASM_SRC   := $(sort $(wildcard controller/*/*.S))
CONN_ASM_SRC := $(sort $(wildcard connector/*/*/*.S))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
INTEG_SRC := $(sort $(wildcard tests/integration/test_*.c))
TOOL_SRC  := $(sort $(wildcard tests/tools/*.c))
SUPPORT_SRC := $(sort $(wildcard tests/support/*.c))
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))

# $(call objs,variant,sources)
objs = $(patsubst %.c,build/$(1)/%.o,$(filter %.c,$(2))) $(patsubst %.S,build/$(1)/%.o,$(filter %.S,$(2)))

# The shipped build; scripts/arm64.sh points these elsewhere to cross-compile.
BUILD_DIR ?= build/rel
BIN_DIR   ?= bin

.PHONY: all deps test test-unit demo bench bench-scale bench-freshness bench-load bench-hostile clean cluster-up cluster-down arm64 fuzz fuzz-build images release
all: $(BIN_DIR)/zoekt-operator $(BIN_DIR)/zoekt-connector

# ---- objects, two variants: rel (shipped) and san (sanitized, used by every test) -----------------
$(BUILD_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(REL_FLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@
build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(SAN_FLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@
build/tsan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(TSAN_FLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@
# One rule per variant: a pattern rule with several targets is one recipe making all of them at once,
# so under -j make took the san and tsan assets.o as made by the rel one, and ar found no file.
$(BUILD_DIR)/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) -I. -c $< -o $@
build/san/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) -I. -c $< -o $@
build/tsan/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) -I. -c $< -o $@
# Files pulled in with .incbin are invisible to dependency tracking: name them.
build/rel/controller/assets/assets.o build/san/controller/assets/assets.o build/tsan/controller/assets/assets.o: \
  $(filter-out %.S %.h,$(wildcard controller/assets/*))
build/rel/connector/tools/schema/schemas.o build/san/connector/tools/schema/schemas.o \
  build/tsan/connector/tools/schema/schemas.o: $(wildcard connector/tools/schema/*.json)

define variant
build/$(1)/libzk.a: $(call objs,$(1),$(LIB_SRC))
	@mkdir -p $$(dir $$@); rm -f $$@; ar rcs $$@ $$^
build/$(1)/libctrl.a: $(call objs,$(1),$(CTRL_SRC) $(ASM_SRC))
	@mkdir -p $$(dir $$@); rm -f $$@; ar rcs $$@ $$^
build/$(1)/libconn.a: $(call objs,$(1),$(CONN_SRC) $(CONN_ASM_SRC))
	@mkdir -p $$(dir $$@); rm -f $$@; ar rcs $$@ $$^
build/$(1)/bin/zoekt-operator: build/$(1)/controller/main.o build/$(1)/libctrl.a build/$(1)/libzk.a
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) -o $$@ $$^ $$(PKG_LIBS)
build/$(1)/bin/zoekt-connector: build/$(1)/connector/main.o build/$(1)/libconn.a build/$(1)/libzk.a
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) -o $$@ $$^ $$(PKG_LIBS)
endef
$(eval $(call variant,$(patsubst build/%,%,$(BUILD_DIR)),$(REL_FLAGS)))
$(eval $(call variant,san,$(SAN_FLAGS)))
$(eval $(call variant,tsan,$(TSAN_FLAGS)))

$(BIN_DIR)/%: $(BUILD_DIR)/bin/%
	@mkdir -p $(BIN_DIR); cp $< $@

# ---- tests ------------------------------------------------------------------------------------------
SAN_LIBS := build/san/libctrl.a build/san/libconn.a build/san/libzk.a
# Helpers the cmocka test programs share (tests/support/): an archive, so each program links only what
# it uses.
build/san/libtestsupport.a: $(patsubst %.c,build/san/%.o,$(SUPPORT_SRC))
build/tsan/libtestsupport.a: $(patsubst %.c,build/tsan/%.o,$(SUPPORT_SRC))
build/san/libtestsupport.a build/tsan/libtestsupport.a:
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
build/san/tests/%: build/san/tests/%.o build/san/libtestsupport.a $(SAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $(TEST_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka
build/tsan/tests/%: build/tsan/tests/%.o build/tsan/libtestsupport.a build/tsan/libctrl.a build/tsan/libconn.a build/tsan/libzk.a
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_FLAGS) $(TEST_LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka
# test_mcp_streamable makes mutex creation fail on demand, to check that the process then ends as
# lib/mem.h says; test_mem makes the Nth allocation fail, to show that running out of memory ends the process and nothing else.
build/san/tests/integration/test_mcp_streamable build/tsan/tests/integration/test_mcp_streamable: TEST_LDFLAGS := -Wl,--wrap=pthread_mutex_init
build/san/tests/unit/test_mem: TEST_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
build/rel/tests/bench/%: build/rel/tests/bench/%.o build/rel/libconn.a build/rel/libctrl.a build/rel/libzk.a
	@mkdir -p $(dir $@)
	$(CC) $(REL_FLAGS) -o $@ $^ $(PKG_LIBS)
# A release copy of the test tools: the search pod benchmark measures the pod, not a sanitized stand-in.
build/rel/tests/tools/%: build/rel/tests/tools/%.o build/rel/libzk.a
	@mkdir -p $(dir $@)
	$(CC) $(REL_FLAGS) -o $@ $^ $(PKG_LIBS)

UNIT_BINS  := $(patsubst %.c,build/san/%,$(UNIT_SRC))
INTEG_BINS := $(patsubst %.c,build/san/%,$(INTEG_SRC))
TOOL_BINS  := $(patsubst %.c,build/san/%,$(TOOL_SRC))
BENCH_BINS := $(patsubst %.c,build/rel/%,$(BENCH_SRC))
FUZZ_REPLAY_BINS := $(patsubst %.c,build/san/%,$(FUZZ_SRC))
TSAN_UNIT_BINS  := $(patsubst %,build/tsan/tests/unit/%,$(TSAN_UNIT))
TSAN_INTEG_BINS := $(patsubst %,build/tsan/tests/integration/%,$(TSAN_INTEG))
# test_faults_node loads the search pod with bench_pod while it kills nginx: a sanitized copy.
TEST_BUILD := all build/san/bin/zoekt-operator build/san/bin/zoekt-connector $(UNIT_BINS) $(INTEG_BINS) $(TOOL_BINS) \
              $(FUZZ_REPLAY_BINS) $(TSAN_UNIT_BINS) $(TSAN_INTEG_BINS) build/san/tests/bench/bench_pod

deps:
	@scripts/deps.sh

# Builds run in a sub-make so that the wildcards see sources and pkg-config sees libraries that `deps`
# may just have installed. Both test targets first check that no include points up a layer
# (scripts/check-layers.sh; docs/architecture.md).
# The images (amd64 for the node, arm64 under emulation) are built before the plane starts; each is
# rebuilt only when its inputs changed. So is the test Gitea (minutes on a fresh machine), so that no
# suite spends its deadline building it. What `make demo` left in the cluster (its operator, which watches
# every namespace, and its corpus) is removed first: the suites run operators of their own. A plane that this target started is stopped at the end, unless
# ZK_KEEP_CLUSTER=1.
test: deps
	@scripts/check-layers.sh
	@$(MAKE) --no-print-directory -j$$(nproc) $(TEST_BUILD)
	@scripts/images.sh build
	@scripts/upstream.sh build gitea || echo "make test: Gitea cannot be built here; its suites say why" >&2
	@started=; scripts/cluster.sh status || started=1; \
	  scripts/cluster.sh up || exit 1; \
	  scripts/demo.sh uninstall || exit 1; \
	  rc=0; tests/run.sh || rc=$$?; \
	  if [ -n "$$started" ] && [ -z "$${ZK_KEEP_CLUSTER:-}" ]; then \
	    scripts/cluster.sh down >build/test-logs/cluster-down.log 2>&1 || \
	      echo "make test: scripts/cluster.sh down failed, see build/test-logs/cluster-down.log" >&2; \
	  fi; \
	  exit $$rc

test-unit:
	@scripts/check-layers.sh
	@$(MAKE) --no-print-directory $(UNIT_BINS) $(TSAN_UNIT_BINS)
	@tests/run.sh unit

# The demo runs Zoekt: without it (scripts/upstream.sh says what to provide) it stops before building.
demo: deps
	@scripts/upstream.sh zoekt $$(dpkg --print-architecture) >/dev/null || \
	  { echo "make demo: stopped, there is no Zoekt to run (see above)" >&2; exit 1; }
	@$(MAKE) --no-print-directory all
	@scripts/cluster.sh up
	@scripts/demo.sh

arm64:
	@scripts/arm64.sh

# The operator-scale section needs a control plane: the one of $KUBECONFIG, or one started (and
# stopped) without a node. bench-scale adds the 1,000-corpus run: BENCH_SCALE_RUNS_1000 runs (default
# one, since a run takes about ten minutes, most of it the plane deleting 20,000 objects afterwards),
# and BENCH_SCALE_FAILING (default 500) failing corpora beside a healthy one. The search-shards section
# (tests/bench/shards.sh) runs on the local node, with the images.
bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BINS) build/san/tests/tools/zoekt-replay build/rel/tests/tools/zoekt-replay \
	  build/san/tests/tools/shard-of
	@tests/bench/run.sh
	@tests/bench/scale.sh 1 100
	@tests/bench/sources.sh
	@scripts/images.sh build
	@scripts/cluster.sh up
	@tests/bench/shards.sh
bench-scale: deps
	@$(MAKE) --no-print-directory all
	@BENCH_SCALE_FAILING=$${BENCH_SCALE_FAILING:-500} tests/bench/scale.sh 1 100 1000:$${BENCH_SCALE_RUNS_1000:-1}
# Push to searchable through a corpus's Service on the local node (tests/bench/freshness.sh): the
# images and the node, as make test has them, and about fifteen minutes.
bench-freshness: deps
	@scripts/images.sh build
	@scripts/cluster.sh up
	@tests/bench/freshness.sh
# 50 agents through a corpus's Service for ten minutes on the organisation index (tests/bench/load.sh).
bench-load: deps
	@$(MAKE) --no-print-directory build/rel/tests/bench/bench_pod
	@scripts/images.sh build
	@scripts/cluster.sh up
	@tests/bench/load.sh

# Hostile clients (slow headers and bodies, session and batch floods) and 10 honest agents through a
# corpus's Service for three minutes (tests/bench/hostile.sh; docs/security.md).
bench-hostile: deps
	@$(MAKE) --no-print-directory build/rel/tests/bench/bench_pod
	@scripts/images.sh build
	@scripts/cluster.sh up
	@tests/bench/hostile.sh

images: deps
	@scripts/images.sh build

# dist/$(VERSION)/: the multi-architecture images as OCI archives, the chart, the rendered manifests,
# SBOMs and SHA256SUMS, every image reference pinned by digest (scripts/release.sh; docs/deploy.md).
# REGISTRY=host/path names where the images will be pushed (default ghcr.io/zoekt-operator).
release: deps
	@scripts/release.sh $(VERSION)

cluster-up:
	@scripts/cluster.sh up
cluster-down:
	@scripts/cluster.sh down

# ---- fuzzing (tests/fuzz/) ---------------------------------------------------------------------------
# Each fuzz target is built twice. For `make test`, with gcc under the sanitizers and a small main that
# replays the target's seed corpus (a more specific rule than build/san/tests/%, so make prefers it).
# For `make fuzz`, with clang and libFuzzer from objects of their own, then run for FUZZ_SECONDS each
# by tests/fuzz/run.sh, which installs clang first when it is missing.
build/san/tests/fuzz/fuzz_%: build/san/tests/fuzz/fuzz_%.o build/san/tests/fuzz/replay_main.o $(SAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS)

FUZZ_CC    ?= clang
# UBSan stays recoverable here so that tests/fuzz/run.sh can suppress a known, reported finding while
# it keeps looking for others; run.sh sets halt_on_error, so every other report still stops the run.
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,build/fuzz/bin/%,$(FUZZ_SRC))
build/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@
build/fuzz/libzk.a: $(call objs,fuzz,$(LIB_SRC))
build/fuzz/%.o: %.S
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -I. -c $< -o $@
build/fuzz/libconn.a: $(call objs,fuzz,$(CONN_SRC) $(CONN_ASM_SRC))
build/fuzz/libctrl.a: $(call objs,fuzz,$(CTRL_SRC))
build/fuzz/libzk.a build/fuzz/libconn.a build/fuzz/libctrl.a:
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
build/fuzz/bin/fuzz_%: build/fuzz/tests/fuzz/fuzz_%.o build/fuzz/libctrl.a build/fuzz/libconn.a build/fuzz/libzk.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)

.SECONDARY: $(patsubst %.c,build/fuzz/%.o,$(FUZZ_SRC))
fuzz-build: $(FUZZ_BINS)
fuzz:
	@tests/fuzz/run.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
