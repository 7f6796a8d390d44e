# Makefile - builds libhsdag (static + shared), the hsdag CLI, tests, fuzzers and benchmarks.
# Not here: dependency installation (scripts/install-deps) and CI policy (.ci/run).
# Targets: all (default), test, asan, fuzz, fuzz-smoke, fuzz-long, bench, bench-scale, demo, demo-cluster,
# results, cli-reference, install, format, format-check, check-layers, clean.

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
OPT     ?= -O2
WERROR  ?=
SAN     ?=

# the version lives in include/hsdag/common.h (HSDAG_VERSION); the SONAME carries the major number
VERSION := $(shell sed -n 's/^\#define HSDAG_VERSION "\(.*\)"/\1/p' include/hsdag/common.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))

PKGS := libprotobuf-c libxml-2.0 json-c openblas libcgraph
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# METIS and GLPK ship no pkg-config file on Debian 12.
LIBS := $(PKG_LIBS) -lmetis -lglpk -lm

ONNX_PROTO ?= $(firstword $(wildcard /usr/include/onnx/onnx.proto /usr/lib/python3/dist-packages/onnx/onnx.proto))

CPPFLAGS += -Iinclude -I$(BUILD)/gen -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
CFLAGS   += -std=c11 -Wall -Wextra -Wpedantic -Wshadow -g $(OPT) $(WERROR) $(SAN) $(PKG_CFLAGS) -fPIC \
            -fvisibility=hidden
LDFLAGS  += $(SAN)

SRCS     := $(sort $(wildcard src/*/*.c))
GEN_C    := $(BUILD)/gen/onnx.pb-c.c
OBJS     := $(SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/onnx.pb-c.o
TOOL_SRCS:= $(sort $(wildcard tools/*.c))
TOOL_OBJS:= $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS:= $(sort $(wildcard tests/test_*.c))
TEST_BINS:= $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
LIB      := $(BUILD)/libhsdag.a
SONAME   := libhsdag.so.$(SOMAJOR)
SOREAL   := libhsdag.so.$(VERSION)
SOLIB    := $(BUILD)/libhsdag.so
CLI      := $(BUILD)/hsdag

.PHONY: cli-reference format format-check check-layers fuzzlib all test test-run asan fuzz fuzz-smoke fuzz-long bench bench-scale demo demo-cluster results install clean check-deps
all: $(LIB) $(SOLIB) $(CLI)

$(GEN_C): $(ONNX_PROTO)
	@test -n "$(ONNX_PROTO)" || { echo "onnx.proto not found: run scripts/install-deps (libonnx-dev)"; exit 1; }
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=$(dir $(ONNX_PROTO)) $(ONNX_PROTO)

$(BUILD)/gen/onnx.pb-c.h: $(GEN_C)

$(BUILD)/obj/gen/onnx.pb-c.o: $(GEN_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -std=c11 -g $(OPT) $(SAN) $(PKG_CFLAGS) -fPIC -fvisibility=hidden -w -c $< -o $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(OBJS)
	@rm -f $@
	ar rcs $@ $^

# libhsdag.so -> libhsdag.so.0 (the SONAME) -> libhsdag.so.0.x.y (the file)
$(SOLIB): $(OBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $(BUILD)/$(SOREAL) $^ $(LDFLAGS) $(LIBS)
	ln -sf $(SOREAL) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(CLI): $(TOOL_OBJS) $(LIB)
	$(CC) -o $@ $(TOOL_OBJS) $(LIB) $(LDFLAGS) $(LIBS)

$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -o $@ $< $(LIB) $(LDFLAGS) $(LIBS)

# `make test` works on a fresh machine: it installs the Debian packages first (a no-op when present), then
# re-enters make so that pkg-config sees them.
test:
	@sh scripts/install-deps
	@$(MAKE) --no-print-directory test-run

test-run: check-layers $(LIB) $(CLI) $(TEST_BINS) $(BUILD)/lsbench $(BUILD)/bench_hsdag
	@BUILD=$(BUILD) sh tests/run.sh $(TEST_BINS)

# Includes point down the layers (README.md, "Layout"); the self-test proves the check can fail.
check-layers:
	@python3 scripts/check-layers.py --self-test >/dev/null && python3 scripts/check-layers.py

asan:
	$(MAKE) BUILD=build-asan CC=clang OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

# ---- fuzzing (clang libFuzzer); fuzz-smoke runs each target briefly on its seed corpus ----
FUZZ_SRCS := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=build-fuzz/%)
FUZZ_SECONDS ?= 10
# fuzzlib is phony so the targets relink whenever the library changed (the sub-make is a no-op otherwise)
fuzzlib:
	$(MAKE) BUILD=build-fuzz CC=clang OPT=-O1 SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer" build-fuzz/libhsdag.a
build-fuzz/fuzz_%: fuzz/fuzz_%.c fuzzlib
	clang $(subst -I$(BUILD)/gen,-Ibuild-fuzz/gen,$(CPPFLAGS)) -std=c11 -g -O1 -fsanitize=address,undefined,fuzzer $(PKG_CFLAGS) -o $@ $< build-fuzz/libhsdag.a $(LIBS)
fuzz: $(FUZZ_BINS)
fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh $(FUZZ_BINS)
# Nightly length: FUZZ_LONG_SECONDS per target (default 600) of CPU time, not just of wall time (run.sh fuzzes
# again until the target has used them), two at a time under nice, corpora kept in build-fuzz/corpus across
# runs, one table row per target appended to build-fuzz/fuzz-long.md.
FUZZ_LONG_SECONDS ?= 600
FUZZ_JOBS ?= 2
fuzz-long: $(FUZZ_BINS)
	@mkdir -p build-fuzz/corpus
	@FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_CPU_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) \
	    FUZZ_CORPUS_DIR=build-fuzz/corpus \
	    FUZZ_REPORT=build-fuzz/fuzz-long.md nice -n 10 sh fuzz/run.sh $(FUZZ_BINS)

# the learner's large-graph rows read transformer graphs generated here (tests/gen_transformer.py)
BENCH_GRAPHS := $(BUILD)/bench/transformer_7k.json $(BUILD)/bench/transformer_100k.json
$(BUILD)/bench/transformer_7k.json: tests/gen_transformer.py
	@mkdir -p $(dir $@)
	python3 tests/gen_transformer.py --layers 76 > $@
$(BUILD)/bench/transformer_100k.json: tests/gen_transformer.py
	@mkdir -p $(dir $@)
	python3 tests/gen_transformer.py --layers 1235 > $@

bench: $(LIB) $(CLI) $(BUILD)/bench_hsdag $(BUILD)/lsbench $(BENCH_GRAPHS) bench-scale
	$(BUILD)/bench_hsdag

# issue 15: every command on generated 1k..1M-op decoders, CPU time, peak RSS, growth exponent (graphs kept in /tmp)
SCALE_SIZES ?= 1000,10000,100000,1000000
bench-scale: $(CLI)
	nice -n 10 python3 scripts/bench-scale.py $(CLI) --sizes $(SCALE_SIZES) $(SCALE_ARGS)

# local search at 100k-1M ops (docs/scale.md); built by make test too, as is bench_hsdag, so that both keep
# compiling (bench_hsdag had fallen behind the output-first API unnoticed)
$(BUILD)/lsbench: bench/local_scale/lsbench.c $(LIB)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LIBS)

$(BUILD)/bench_hsdag: $(BENCH_SRCS) $(LIB)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(BENCH_SRCS) $(LIB) $(LDFLAGS) $(LIBS)

# CALIBRATE=1: also profile two bundled models on this CPU with ONNX Runtime, fit this CPU (hsdag calibrate) and
# place Inception-V3 on it plus the cpu-gpu preset's GPU.
demo:
	sh scripts/install-deps
	$(MAKE) all
	CALIBRATE=$(CALIBRATE) sh scripts/demo.sh $(CLI)

# PAC-ML with the shipped learned policies (no training): blocking rate per beta distribution.
demo-cluster:
	sh scripts/install-deps
	$(MAKE) all
	$(CLI) cluster compare --seeds 0,1,2 --policies para-max,para-min,random,fixed:4,lookahead,learned

# The README's CLI reference is generated from the option table (tests/cli/reference.sh checks it).
cli-reference: $(CLI)
	python3 scripts/cli-reference.py $(CLI)

results: $(CLI)
	python3 scripts/results.py $(CLI) $(SECTIONS)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/hsdag $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/$(SOREAL) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(SOREAL) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libhsdag.so
	install -m 644 include/hsdag/*.h $(DESTDIR)$(PREFIX)/include/hsdag/
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@PKGS@|$(PKGS)|' -e 's|@VERSION@|$(VERSION)|' hsdag.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hsdag.pc
	install -d $(DESTDIR)$(PREFIX)/share/hsdag/policies/pacml
	install -m 644 policies/pacml/*.bin $(DESTDIR)$(PREFIX)/share/hsdag/policies/pacml/
	install -d $(DESTDIR)$(PREFIX)/share/hsdag/policies/hsdag
	install -m 644 policies/hsdag/*.bin $(DESTDIR)$(PREFIX)/share/hsdag/policies/hsdag/
	install -d $(DESTDIR)$(PREFIX)/share/hsdag/scripts  # hsdag profile's ONNX Runtime bridge (hsdag_data_find)
	install -m 755 scripts/ort-profile.js $(DESTDIR)$(PREFIX)/share/hsdag/scripts/

# Every C file follows .clang-format; CI runs format-check and fails on any difference.
FORMAT_SRCS = $(sort $(wildcard src/*/*.c src/*/*.h include/hsdag/*.h tools/*.c tools/*.h tests/*.c tests/*.h \
                      bench/*.c bench/*.h fuzz/*.c fuzz/*.h))
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRCS) && echo "format-check: $(words $(FORMAT_SRCS)) files clean"

clean:
	rm -rf build build-asan build-fuzz

-include $(OBJS:.o=.d) $(TOOL_OBJS:.o=.d)
