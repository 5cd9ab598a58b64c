// What every libFuzzer harness of tests/fuzz/ shares: quiet logs, a cap on
// each allocation (so that a shape in a fuzzed file cannot exhaust the
// machine: Crema reports it as a MemoryError instead), a private scratch
// folder, and the seed writing that run_fuzzer.sh asks for.
#ifndef CREMA_TESTS_FUZZ_FUZZ_COMMON_HPP_
#define CREMA_TESTS_FUZZ_FUZZ_COMMON_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

namespace crema {
namespace fuzz {

// The largest single allocation a fuzzed input may make (16 MiB).
constexpr size_t kMaxAllocation = size_t(16) << 20;

// This process's scratch folder (created on first use, removed at exit).
const std::string& WorkDir();
void WriteFile(const std::string& path, const uint8_t* data, size_t size);
void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);
// Removes a file or a folder with what it holds.
void Remove(const std::string& path);
void MakeDir(const std::string& path);

// Each harness defines it: writes the seeds of its corpus into `dir`
// (run_fuzzer.sh runs the harness with CREMA_FUZZ_WRITE_SEEDS=dir).
void WriteSeeds(const std::string& dir);

}  // namespace fuzz
}  // namespace crema

#endif  // CREMA_TESTS_FUZZ_FUZZ_COMMON_HPP_
