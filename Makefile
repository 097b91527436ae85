# Thin wrapper over CMake. `make demo` and `make test` do all the set-up.
BUILD ?= build
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian 12 packages the build, the tests and the benchmarks need
# (liburing2 only for the interceptor test that liburing is refused io_uring;
# that part skips without it; systemd for systemd-analyze and python3-yaml
# for the deploy/ checks, ctest DeployManifests).
DEBS := cmake ninja-build g++ gcc make git pkg-config libc6-dev \
  libroaring-dev libabsl-dev libxxhash-dev libtomlplusplus-dev \
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc \
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev libpq-dev \
  postgresql hashdeep hyperfine strace python3 python3-pytest xxhash \
  ruby ruby-minitest ruby-rspec binutils openssl \
  liburing2 systemd python3-yaml

# npm tooling, pinned: the GitHub action and workflows are validated with
# it in `make test` (ctest GithubActionsValid).
ACTION_VALIDATOR_VERSION := 0.6.0
ACTION_VALIDATOR := $(BUILD)/tools/node_modules/.bin/action-validator

.PHONY: all deps configure build test test-sanitize demo bench clean

all: build

# Installs only what is missing; silent when everything is there.
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

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	@$(MAKE) --no-print-directory test-sanitize

# The unit tests again under ASan+UBSan, and the scheduler's under TSan (the
# preload library and the programs it is loaded into are not: a sanitizer
# runtime must come first in a process).
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_TESTS := ste_indexer_test ste_scheduler_test
# The scheduler's threads under ThreadSanitizer too.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
test-sanitize: deps
	@[ -f $(BUILD)-asan/build.ninja ] || cmake -S . -B $(BUILD)-asan -G Ninja \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$(SAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SAN_FLAGS)" >/dev/null
	cmake --build $(BUILD)-asan -j $(JOBS) --target $(SAN_TESTS)
	@for t in $(SAN_TESTS); do \
	  echo "== $$t (ASan+UBSan)"; \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(BUILD)-asan/tests/$$t --gtest_brief=1 || exit 1; \
	done
	@[ -f $(BUILD)-tsan/build.ninja ] || cmake -S . -B $(BUILD)-tsan -G Ninja \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(TSAN_FLAGS)" >/dev/null
	cmake --build $(BUILD)-tsan -j $(JOBS) --target ste_scheduler_test
	@echo "== ste_scheduler_test (TSan)"
	@TSAN_OPTIONS=halt_on_error=1 $(BUILD)-tsan/tests/ste_scheduler_test --gtest_brief=1

demo: build
	@./docs/demo.sh $(BUILD)

bench: build
	@./bench/run_all.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
