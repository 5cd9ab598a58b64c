# Conventional entry points; CMake is the build. BUILD_DIR and JOBS may be overridden.
BUILD_DIR ?= build/release
JOBS ?= $(shell nproc)

.PHONY: all configure with-tests test check demo bench clean format

all: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

configure:
	@test -f $(BUILD_DIR)/CMakeCache.txt || cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

# The tests are part of this tree from here on (quickstart.sh builds it without).
with-tests:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCREMA_BUILD_TESTS=ON >/dev/null
	cmake --build $(BUILD_DIR) -j$(JOBS)

# Build and run every suite and scripted check of this build.
test: with-tests
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# The full check CI runs: CPU, CUDA-compile, ThreadSanitizer and AddressSanitizer builds.
check:
	./scripts/test.sh

# The main job.
demo:
	./scripts/quickstart.sh

bench: with-tests
	./scripts/bench/run.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp' '*.cu')

clean:
	rm -rf build
