# The two commands of the README, and a few more.  The real build is CMake;
# this file only installs what is missing and calls it.
#   make demo   build (quietly: the log is in build/build.log), then record
#               a real MCP session and show it
#   make install  build if needed, then install the binary, its man page
#               and bash and zsh completions under $(DESTDIR)$(PREFIX)
#   make uninstall  remove them again
#   make test   build with sanitizers, run the unit tests, the fuzz targets
#               for 10 s each, and the end-to-end tests (with a plain build
#               for the ones under valgrind)
#   make fuzz   build the libFuzzer targets (clang) and run each for 60 s
#   make soak   the long variants of the big-traffic and store tests
#   make bench  build for release, measure mcpreel against a direct connection

BUILD      ?= build
ASAN_BUILD ?= build-asan
BENCH_BUILD ?= build-bench
FUZZ_BUILD ?= build-fuzz
# Without sanitizers, for valgrind (the two do not mix).
VALGRIND_BUILD ?= build-valgrind
JOBS       ?= 2
# Where make install puts mcpreel (DESTDIR too, for packaging).
PREFIX     ?= /usr/local
# How long each fuzz target runs: alone (make fuzz), and within make test.
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 10

.PHONY: all build deps demo install uninstall test unit fuzz fuzz-test e2e soak bench clean

all: build

build:
	scripts/deps.sh build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

# The build's output goes to $(BUILD)/build.log, and on the terminal only a
# line of progress (the log's end if it fails), then the demo's own.
demo:
	@JOBS=$(JOBS) scripts/build.sh $(BUILD) demo
	@scripts/demo.sh $(BUILD)/mcpreel

# Installs from an existing build directory as it is (BUILD=build-asan
# works too), bringing only the binary and its generated docs up to date;
# configures and builds $(BUILD) first if it was never built.  The build
# runs as a make of its own (not a sub-make printing each directory).
install:
	@[ -f $(BUILD)/CMakeCache.txt ] || $(MAKE) build BUILD=$(BUILD)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	    cmake --build $(BUILD) -j $(JOBS) --target mcpreel mcpreel_docs
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# What make install put there (the same PREFIX and DESTDIR).
uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/mcpreel" \
	    "$(DESTDIR)$(PREFIX)/share/man/man1/mcpreel.1" \
	    "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/mcpreel" \
	    "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_mcpreel"

test:
	scripts/deps.sh test
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMCPREEL_ASAN=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cmake -S . -B $(VALGRIND_BUILD) -DCMAKE_BUILD_TYPE=Debug \
	    -DMCPREEL_TESTS=OFF -DMCPREEL_BENCH=OFF
	cmake --build $(VALGRIND_BUILD) -j $(JOBS)
	$(MAKE) unit fuzz-test e2e

unit:
	scripts/unit.sh $(ASAN_BUILD) $(JOBS)

# The libFuzzer targets of tests/fuzz/ in a clang build of their own.
fuzz:
	scripts/deps.sh fuzz
	JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The short run make test does (deps.sh test installed clang).
fuzz-test:
	JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_TEST_SECONDS)

e2e:
	MCPREEL=$(CURDIR)/$(ASAN_BUILD)/mcpreel \
	    MCPREEL_VALGRIND=$(CURDIR)/$(VALGRIND_BUILD)/mcpreel \
	    node --test --test-concurrency=1 tests/e2e/

# The long variants of the big-traffic and store tests (ten times the
# sizes: a 3 GB message over the record cap, 2.4 GB to a slow reader);
# builds as make test does.
soak:
	scripts/deps.sh test
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMCPREEL_ASAN=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cmake -S . -B $(VALGRIND_BUILD) -DCMAKE_BUILD_TYPE=Debug \
	    -DMCPREEL_TESTS=OFF -DMCPREEL_BENCH=OFF
	cmake --build $(VALGRIND_BUILD) -j $(JOBS)
	MCPREEL=$(CURDIR)/$(ASAN_BUILD)/mcpreel \
	    MCPREEL_VALGRIND=$(CURDIR)/$(VALGRIND_BUILD)/mcpreel MCPREEL_SOAK=1 \
	    node --test --test-concurrency=1 tests/e2e/huge.test.mjs \
	    tests/e2e/store_faults.test.mjs

# The benchmark (bench/run.sh); the unit tests are left out of
# this build so that it needs no criterion.
bench:
	scripts/deps.sh bench
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DMCPREEL_TESTS=OFF
	cmake --build $(BENCH_BUILD) -j $(JOBS)
	bench/run.sh $(BENCH_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(VALGRIND_BUILD)
