#include "fuzz_common.hpp"

#include <glog/logging.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "crema/common.hpp"

namespace crema {
namespace fuzz {

namespace {
std::string MakeWorkDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/crema-fuzz-XXXXXX";
  if (!mkdtemp(&pattern[0])) throw std::runtime_error("cannot create " + pattern);
  return pattern;
}

void RemoveWorkDir() {
  std::error_code ignored;
  std::filesystem::remove_all(WorkDir(), ignored);
}
}  // namespace

const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string made = MakeWorkDir();
    return made;
  }();
  return dir;
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("cannot write " + path);
}

void WriteFile(const std::string& path, const std::string& contents) {
  WriteFile(path, reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Remove(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

void MakeDir(const std::string& path) {
  std::error_code ignored;
  std::filesystem::create_directories(path, ignored);
}

}  // namespace fuzz
}  // namespace crema

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  FLAGS_minloglevel = 3;  // Only FATAL: a fuzzed input's errors are expected.
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
  crema::Context::set_max_allocation(crema::fuzz::kMaxAllocation);
  crema::fuzz::WorkDir();
  std::atexit(crema::fuzz::RemoveWorkDir);
  if (const char* seeds = std::getenv("CREMA_FUZZ_WRITE_SEEDS")) {
    crema::fuzz::WriteSeeds(seeds);
    std::exit(0);
  }
  return 0;
}
