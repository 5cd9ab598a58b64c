# Conventional entry points; CMake is the build. BUILD_DIR and JOBS may be overridden.
BUILD_DIR ?= build/release
JOBS ?= $(shell nproc)

.PHONY: all configure test check demo bench clean format

all: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

configure:
	@test -f $(BUILD_DIR)/CMakeCache.txt || cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

# Build and run every suite of this build.
test: all
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# The full check CI runs: CPU, CUDA-compile, ThreadSanitizer and AddressSanitizer builds.
check:
	./scripts/test.sh

# The main job.
demo:
	./scripts/quickstart.sh

bench: all
	./scripts/bench/run.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp' '*.cu')

clean:
	rm -rf build
