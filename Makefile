# Thin wrapper over CMake. `make demo` and `make test` do all the set-up.
BUILD ?= build
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian 12 packages the build, the tests and the benchmarks need
# (liburing2 only for the interceptor test that liburing is refused io_uring;
# that part skips without it; systemd for systemd-analyze and python3-yaml
# for the deploy/ checks, ctest DeployManifests; clang-14 and its runtimes
# for the sanitizer tree: libFuzzer, ASan, UBSan; chromium for ctest
# Report.*, which loads `ste report`'s page headless).
# BUILD_DEBS alone build ste, the preload library and the Debian package
# (`make package`, -DSTE_BUILD_TESTS=OFF; python3-dev for the definition
# tracker's compiled backend, skipped without it); the rest are for the tests.
BUILD_DEBS := cmake ninja-build g++ gcc make git pkg-config libc6-dev \
  libroaring-dev libabsl-dev libxxhash-dev libtomlplusplus-dev \
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc \
  libsqlite3-dev libpq-dev dpkg-dev file python3-dev
DEBS := $(BUILD_DEBS) libgtest-dev libgmock-dev libbenchmark-dev \
  postgresql hashdeep hyperfine strace python3 python3-pytest xxhash \
  ruby ruby-minitest ruby-rspec binutils openssl \
  liburing2 systemd python3-yaml \
  clang-14 libclang-rt-14-dev chromium

# npm tooling, pinned: the GitHub action and workflows are validated with
# it in `make test` (ctest GithubActionsValid).
ACTION_VALIDATOR_VERSION := 0.6.0
ACTION_VALIDATOR := $(BUILD)/tools/node_modules/.bin/action-validator

.PHONY: all deps deps-build configure build package test test-sanitize san-build fuzz demo bench clean

all: build

# Installs only what is missing; silent when everything is there.
deps-build:
	@missing=$$(for p in $(BUILD_DEBS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
	  echo "make deps-build: installing" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

deps:
	@missing=$$(for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@[ -x $(ACTION_VALIDATOR) ] || { \
	  echo "make deps: npm install @action-validator/cli@$(ACTION_VALIDATOR_VERSION) into $(BUILD)/tools"; \
	  npm install --prefix $(BUILD)/tools --no-audit --no-fund --silent \
	    @action-validator/cli@$(ACTION_VALIDATOR_VERSION) >/dev/null; }

# ccache when it is there (the trees below are rebuilt often).
CCACHE := $(shell command -v ccache >/dev/null 2>&1 && \
  echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CCACHE)

# A tree `make package` configured without the tests gets them back.
configure: deps $(BUILD)/build.ninja
	@if grep -q '^STE_BUILD_TESTS:BOOL=OFF' $(BUILD)/CMakeCache.txt; then \
	  cmake -S . -B $(BUILD) -DSTE_BUILD_TESTS=ON >/dev/null; fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The Debian package: build/ste_<version>_<arch>.deb (cmake/install.cmake).
# Needs only BUILD_DEBS: a fresh tree is configured without the tests (no
# GoogleTest, benchmark, clang or PostgreSQL server); an existing tree
# builds just ste (with the Python tracer) and the preload library.
package: deps-build
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTE_BUILD_TESTS=OFF $(CCACHE)
	cmake --build $(BUILD) -j $(JOBS) --target ste ste_preload
	cd $(BUILD) && cpack -G DEB
	@ls $(BUILD)/ste_*.deb

# The tests include the package unpacked alone (ctest PackageInstalled).
test: build
	cd $(BUILD) && cpack -G DEB >/dev/null
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	@$(MAKE) --no-print-directory test-sanitize

# One sanitizer tree, $(SAN_BUILD), built with clang-14 under ASan+UBSan
# (-O1, line tables only: what a report needs): the unit tests, the `ste`
# that the select, record and distributed e2e suites of $(BUILD) run
# (ctest label ste-e2e, with STE_TEST_BINARY: tests/support/test_support.h),
# and the fuzz targets
# (tests/fuzz; the libraries carry -fsanitize=fuzzer-no-link so that the
# fuzzer sees their coverage). The preload library stays unsanitized (C,
# gcc): a sanitizer runtime must come first in a process, and the programs
# it is loaded into are not ours. The sanitized ste itself is never
# preloaded by the suites (it preloads the tests it runs); and clang links
# the ASan runtime statically into it, so there is no libasan.so that
# LD_PRELOAD could come before (`ste run -- build-san/ste ...` works too). The store's and the
# scheduler's tests (build ownership, coordination, concurrent store writers) also under TSan,
# in $(BUILD)-tsan.
SAN_BUILD := $(BUILD)-san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_TESTS := ste_indexer_test ste_store_test ste_scheduler_test ste_cli_test
TSAN_TESTS := ste_store_test ste_scheduler_test
FUZZ_TARGETS := log_reader inventory selection_index config runner_results baseline_archive report_stream \
  env_file pytest_ini
SAN_TARGETS := ste $(SAN_TESTS) $(addprefix ste_fuzz_,$(FUZZ_TARGETS)) ste_fuzz_make_report_seeds
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
FUZZ_SECONDS ?= 60

$(SAN_BUILD)/build.ninja:
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize $(CCACHE) \
	  -DCMAKE_C_COMPILER=gcc -DCMAKE_C_FLAGS="-O2" \
	  -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_CXX_FLAGS="$(SAN_FLAGS) -fsanitize=fuzzer-no-link -O1 -gline-tables-only" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SAN_FLAGS)" -DSTE_FUZZ=ON >/dev/null

$(BUILD)-tsan/build.ninja:
	cmake -S . -B $(BUILD)-tsan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize $(CCACHE) \
	  -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS) -O1 -g1" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(TSAN_FLAGS)" >/dev/null

san-build: deps $(SAN_BUILD)/build.ninja
	cmake --build $(SAN_BUILD) -j $(JOBS) --target $(SAN_TARGETS)

# Needs $(BUILD) built (its e2e test binaries run the sanitized ste).
test-sanitize: san-build $(BUILD)-tsan/build.ninja
	@for t in $(SAN_TESTS); do \
	  echo "== $$t (ASan+UBSan)"; \
	  $(SAN_ENV) $(SAN_BUILD)/tests/$$t --gtest_brief=1 || exit 1; \
	done
	@echo "== select, record and distributed e2e against $(SAN_BUILD)/ste (ASan+UBSan)"
	cd $(BUILD) && $(SAN_ENV) STE_TEST_BINARY=$(abspath $(SAN_BUILD))/ste \
	  ctest --output-on-failure -j $(JOBS) --timeout 600 -L ste-e2e
	@echo "== fuzz targets: committed corpora, then $$(sed -n 's/^STE_FUZZ_SHORT_SECONDS:STRING=//p' $(SAN_BUILD)/CMakeCache.txt) s each"
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L fuzz
	cmake --build $(BUILD)-tsan -j $(JOBS) --target $(TSAN_TESTS)
	@for t in $(TSAN_TESTS); do \
	  echo "== $$t (TSan)"; \
	  TSAN_OPTIONS=halt_on_error=1 $(BUILD)-tsan/tests/$$t --gtest_brief=1 || exit 1; \
	done

# Each fuzz target for FUZZ_SECONDS on one core, from its committed corpus
# (new inputs into $(SAN_BUILD)/fuzz-work/<target>, never the source tree);
# tests/fuzz/README.md has the figures and what a crash means.
fuzz: san-build
	@mkdir -p $(SAN_BUILD)/fuzz-work
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(SAN_BUILD)/fuzz-work/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  $(SAN_BUILD)/fuzz/ste_fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=30 -print_final_stats=1 \
	    -artifact_prefix=$(SAN_BUILD)/fuzz-work/$$t- $(SAN_BUILD)/fuzz-work/$$t tests/fuzz/$$t \
	    > $(SAN_BUILD)/fuzz-work/$$t.log 2>&1 || { tail -40 $(SAN_BUILD)/fuzz-work/$$t.log; exit 1; }; \
	  grep -h 'stat::number_of_executed_units\|stat::new_units_added' $(SAN_BUILD)/fuzz-work/$$t.log; \
	done

demo: build
	@./docs/demo.sh $(BUILD)

bench: build
	cmake --build $(BUILD) -j $(JOBS) --target benchmarks
	@./bench/run_all.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(BUILD)-tsan
